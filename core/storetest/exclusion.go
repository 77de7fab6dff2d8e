package storetest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

var exclusionPromises = []promise{
	{"store", exclusionAtTheStore},
	{"locker", exclusionThroughLockers},
	{"keys-independent", keysIndependent},
}

// Many goroutines race Acquire and Release on one key with tokens of their
// own: at most one is ever between a grant and its release.
func exclusionAtTheStore(t *testing.T, h Harness) {
	f := open(t, h)
	key := f.key()
	const workers, rounds = 8, 6
	var inside, grants atomic.Int32
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range rounds {
				var l store.Lease
				for {
					// A token serves one acquire: a store may cancel a
					// refused one (store.Lease).
					l = f.lease(key, f.h.long())
					_, err := f.s.Acquire(f.ctx, l)
					if err == nil {
						break
					}
					if !errors.Is(err, core.ErrNotObtained) {
						t.Errorf("Acquire: %v", err)
						return
					}
					time.Sleep(time.Millisecond)
				}
				if n := inside.Add(1); n != 1 {
					t.Errorf("%d holders at once", n)
				}
				grants.Add(1)
				time.Sleep(100 * time.Microsecond)
				inside.Add(-1)
				if err := f.s.Release(f.ctx, l.Key, l.Token); err != nil {
					t.Errorf("Release by the holder: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := grants.Load(); n != workers*rounds && !t.Failed() {
		t.Fatalf("%d grants, want %d", n, workers*rounds)
	}
}

// Goroutines on several Lockers run Do on one key: never two inside, and
// every run gets its turn.
func exclusionThroughLockers(t *testing.T, h Harness) {
	f := open(t, h)
	lockers := make([]*core.Locker, 3)
	for i := range lockers {
		lockers[i] = f.locker(core.WithTTL(max(time.Second, 5*h.short())),
			core.WithRetry(backoff.Exponential(time.Millisecond, 20*time.Millisecond)))
	}
	key := random()
	const workers, rounds = 12, 4
	var inside, entries atomic.Int32
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			for range rounds {
				err := lockers[g%len(lockers)].Do(f.ctx, key, func(context.Context) error {
					if n := inside.Add(1); n != 1 {
						t.Errorf("%d holders inside Do at once", n)
					}
					time.Sleep(100 * time.Microsecond)
					inside.Add(-1)
					entries.Add(1)
					return nil
				})
				if err != nil {
					t.Errorf("Do: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := entries.Load(); n != workers*rounds && !t.Failed() {
		t.Fatalf("%d runs, want %d", n, workers*rounds)
	}
}

// A lock on one key leaves every other key free.
func keysIndependent(t *testing.T, h Harness) {
	f := open(t, h)
	a, b := f.lease(f.key(), h.long()), f.lease(f.key(), h.long())
	f.acquire(a)
	f.acquire(b)
	f.mustBeTaken(a.Key, "a held key")
	f.release(a)
	f.mustBeFree(a.Key, "a released key")
	f.mustBeTaken(b.Key, "a key held beside one released")
	f.release(b)
}
