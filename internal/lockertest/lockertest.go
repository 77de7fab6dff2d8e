// Package lockertest is the Locker's own behaviour, checked on any store:
// exclusion, conflicts, stale holders, the watchdog, waiting and waking,
// lines, records and Once. core's tests run it on the memory store; the
// tests of each store package run it on theirs (Redis, Cluster, Redlock),
// so that every store row lives with its store and every check is written
// once.
package lockertest

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore"
	"github.com/reqlock/reqlock/redisstore/redlock"
)

// Store is one store the Locker's behaviour runs on.
type Store struct {
	Name string
	// Open returns a fresh, empty store and a func that deletes a store key
	// behind the holder's back, as FLUSHALL or an operator would.
	Open func(t *testing.T) (s core.Store, vanish func(skey string))
	// Labelled runs everything a second time with every Locker labelled
	// (WithHolder): a label changes the value the store keeps, and the
	// whole contract must hold with it too.
	Labelled bool
}

// Memory is the memory store.
func Memory() Store {
	return Store{Name: "memory", Labelled: true, Open: func(t *testing.T) (core.Store, func(string)) {
		s := memorystore.New()
		return s, s.Delete
	}}
}

// Redis is the Redis store on one server.
func Redis() Store {
	return Store{Name: "redis", Labelled: true, Open: func(t *testing.T) (core.Store, func(string)) {
		c := redistest.Start(t).Client(t)
		return redisstore.New(c), func(k string) { c.Del(context.Background(), k) }
	}}
}

// Cluster is the Redis store on a Cluster of three masters.
func Cluster() Store {
	return Store{Name: "cluster", Open: func(t *testing.T) (core.Store, func(string)) {
		cc := redistest.StartCluster(t, 3).Client(t)
		return redisstore.New(cc), func(k string) { cc.Del(context.Background(), k) }
	}}
}

// Redlock is Redlock on five masters.
func Redlock() Store {
	return Store{Name: "redlock", Labelled: true, Open: func(t *testing.T) (core.Store, func(string)) {
		servers := redistest.StartN(t, 5)
		clients := make([]redis.UniversalClient, len(servers))
		for i, s := range servers {
			clients[i] = s.Client(t)
		}
		// The contract is about answers, not latency: a generous node
		// timeout keeps a -race run on a loaded two-core machine from
		// timing out all five nodes at once.
		return redlock.New(clients...).WithNodeTimeout(time.Second), func(k string) {
			for _, c := range clients {
				c.Del(context.Background(), k)
			}
		}
	}}
}

// Run checks the Locker's behaviour on each store, one subtest for each
// behaviour, and under it one for each store.
func Run(t *testing.T, stores ...Store) {
	for _, c := range []struct {
		name string
		run  func(*testing.T, []Store)
	}{
		{"ContractMutualExclusion", contractMutualExclusion},
		{"ContractTryObtainConflict", contractTryObtainConflict},
		{"ContractStaleReleaseFreesNothing", contractStaleReleaseFreesNothing},
		{"ContractWatchdogKeepsShortLease", contractWatchdogKeepsShortLease},
		{"ContractReleaseWakesWaiter", contractReleaseWakesWaiter},
		{"ContractObtainHonoursContext", contractObtainHonoursContext},
		{"ContractLostWhenKeyVanishes", contractLostWhenKeyVanishes},
		{"ContractWithoutWatchdogExpires", contractWithoutWatchdogExpires},
		{"ContractDoReleasesOnPanic", contractDoReleasesOnPanic},
		{"ContractDoReleasesAfterCancel", contractDoReleasesAfterCancel},
		{"ContractBadKeys", contractBadKeys},
		{"ContractObtainAfterSkipsTheRepeat", contractObtainAfterSkipsTheRepeat},
		{"OnceRunsOnceAndReplays", onceRunsOnceAndReplays},
		{"OnceRecordsOnlyAnswers", onceRecordsOnlyAnswers},
		{"OnceRetentionExpires", onceRetentionExpires},
		{"RecordWrittenOnlyByHolder", recordWrittenOnlyByHolder},
		{"EmptyRecordIsARecord", emptyRecordIsARecord},
		{"LineServesInOrder", lineServesInOrder},
		{"WakeAcrossLockers", wakeAcrossLockers},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, stores) })
	}
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// NewLocker is a Locker on s that logs nothing, labelled as the run of s
// asks (see Store.Labelled) unless opts set a label of their own.
func NewLocker(s core.Store, opts ...core.Option) *core.Locker {
	base := []core.Option{core.WithLogger(quiet)}
	if label, ok := labels.Load(s); ok {
		base = append(base, core.WithHolder(label.(string)))
	}
	return core.NewLocker(s, append(base, opts...)...)
}

// labels maps the stores of the labelled runs to the label every Locker
// over them gets.
var labels sync.Map

// Each runs f on a fresh store of each of stores, then again, labelled,
// on those that ask for it; the subtests are named after the store
// ("redis", "redis+holder").
func Each(t *testing.T, stores []Store, f func(t *testing.T, s core.Store, vanish func(string))) {
	for _, sc := range stores {
		t.Run(sc.Name, func(t *testing.T) {
			s, vanish := sc.Open(t)
			f(t, s, vanish)
		})
	}
	for _, sc := range stores {
		if !sc.Labelled {
			continue
		}
		t.Run(sc.Name+"+holder", func(t *testing.T) {
			s, vanish := sc.Open(t)
			labels.Store(s, "pod-"+sc.Name)
			t.Cleanup(func() { labels.Delete(s) })
			f(t, s, vanish)
		})
	}
}

// Context is a context that ends after d or with the test.
func Context(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
