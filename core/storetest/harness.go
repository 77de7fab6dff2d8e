package storetest

import (
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

// Harness is what a store's test hands the suite: how to get a store, and
// the optional hooks for what the suite cannot do through the store alone.
// Only New is required.
type Harness struct {
	// New returns a store for one test, living until that test ends: a
	// fresh one, or the same shared one every time. The suite uses keys no
	// other test uses (Prefix and a random part), so a shared store needs
	// no cleaning between tests.
	New func(t testing.TB) core.Store

	// Prefix starts every key the suite uses; a store that must keep its
	// keys in a namespace says which here. Empty: core.DefaultPrefix.
	Prefix string

	// MinTTL is the shortest lease the store honours to the millisecond (a
	// store with whole-second leases, like etcd's, says 2s). The suite's
	// short leases are never shorter, and its waits scale with it. Zero:
	// 200ms.
	MinTTL time.Duration

	// HandOffBound is the longest a lock handed to a waiter that never
	// claims it keeps the key from others. Zero: store.HandOffTimeout. A
	// Granter's is never less: its Lockers trust a hand-off that long.
	HandOffBound time.Duration

	// Slow, when set, returns a store whose commands the test can hold on
	// their way to the store, so that an acquire can land after its caller
	// gave up (the late-landing promises). Without it those promises are
	// skipped, and the store's own tests must cover them (see the package
	// doc).
	Slow func(t testing.TB) Slow

	// Writes, when set, counts the writes the backend of s (a store New
	// returned) has taken so far, to prove Inspect writes nothing. Without
	// it Inspect is only checked not to change what the store answers.
	Writes func(t testing.TB, s core.Store) int64

	// Close, when set, closes the client under s (a store New returned),
	// so that the suite can check the store then says core.ErrStoreClosed.
	// A store with no client to close leaves it nil.
	Close func(t testing.TB, s core.Store)

	// Waive names the promises the store does not make, each with the
	// reason, by the subtest's path under Run ("fences/strict", say). A
	// waived promise is skipped with its reason; a name that is no promise
	// fails the run, so that a typo waives nothing.
	Waive map[string]string
}

// Slow is a store over a link the test controls.
type Slow struct {
	// Store reaches the same data as the stores New returns (or as one of
	// them: the suite uses Store alone for these tests).
	Store core.Store
	// Hold holds the next command Store sends for key (on a store of
	// several nodes, each node's copy) until land is called; land waits
	// until the caller has given up on it (its connection closed, say), lets
	// it reach the store, and returns once the store has run it.
	Hold func(t testing.TB, key string) (land func())
}

// defaultMinTTL is the short lease of a store that honours milliseconds:
// long enough that a loaded -race run does not outlive it between two calls
// meant to fall inside it.
const defaultMinTTL = 200 * time.Millisecond

func (h Harness) prefix() string {
	if h.Prefix == "" {
		return core.DefaultPrefix
	}
	return h.Prefix
}

// short is the suite's short lease.
func (h Harness) short() time.Duration { return max(h.MinTTL, defaultMinTTL) }

// long is a lease no test outlives.
func (h Harness) long() time.Duration { return max(30*time.Second, 20*h.MinTTL) }

// patience bounds every wait for something that must happen: it fails a
// hang, and says nothing about speed.
func (h Harness) patience() time.Duration { return max(10*time.Second, 10*h.MinTTL) }

func (h Harness) handOffBound() time.Duration {
	if h.HandOffBound > 0 {
		return h.HandOffBound
	}
	return store.HandOffTimeout
}
