package storetest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

// On a store that keeps permit lines, twice as many waiters as permits,
// half on each of two Lockers (instances), take turns on one key, woken by
// each other's releases alone (their retry policy would not poll before
// the test's patience runs out): every waiter is served every round, none
// starves, and never more than n hold a permit at once.
func semaphoreLineTurns(t *testing.T, h Harness, n int) {
	f := open(t, h)
	as[store.PermitLines](f, "store.PermitLines", "its Semaphores' waiters do not stand in one line across instances, but poll")
	lineTurns(t, f, [2]core.Store{f.s, f.s}, n)
}

// The same across two stores of the harness's (two clients of the same
// data, as two processes have): the line, and the wake-ups, are the
// store's, not one client's.
func semaphoreLineTurnsAcrossStores(t *testing.T, h Harness, n int) {
	f := open(t, h)
	as[store.PermitLines](f, "store.PermitLines", "its Semaphores' waiters do not stand in one line across instances, but poll")
	lineTurns(t, f, [2]core.Store{f.s, f.twin()}, n)
}

// lineTurns runs 2n+2 waiters, alternately on Lockers over stores[0] and
// stores[1], taking turns for three rounds.
func lineTurns(t *testing.T, f *fixture, stores [2]core.Store, n int) {
	h := f.h
	var sems [2]*core.Semaphore
	for i := range sems {
		sems[i] = f.lockerOn(stores[i], core.WithTTL(h.long()), core.WithRetry(backoff.Constant(time.Minute))).Semaphore(n)
	}
	const rounds = 3
	key := random()
	ctx, cancel := context.WithTimeout(f.ctx, h.patience())
	defer cancel()
	var holding, most atomic.Int64
	served := make([]int, 2*n+2)
	errs := make(chan error, len(served))
	var wg sync.WaitGroup
	for w := range served {
		sem := sems[w%2]
		wg.Go(func() {
			for range rounds {
				lk, err := sem.Obtain(ctx, key)
				if err != nil {
					errs <- err
					return
				}
				now := holding.Add(1)
				for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
				}
				time.Sleep(time.Millisecond)
				holding.Add(-1)
				served[w]++
				if err := lk.Release(f.ctx); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a waiter gave up: %v", err)
	}
	for w, s := range served {
		if s != rounds {
			t.Errorf("waiter %d (Locker %d) was served %d of %d rounds within %v", w, w%2, s, rounds, h.patience())
		}
	}
	if m := most.Load(); m > int64(n) {
		t.Errorf("%d held a permit at once, limit %d", m, n)
	}
}

// twin is a second store from the harness, reaching the data of the
// fixture's own, as another instance's client would; the test is skipped
// when the harness's stores share nothing (a fresh store each time) or it
// hands out one store.
func (f *fixture) twin() core.Store {
	f.t.Helper()
	other := f.h.New(f.t)
	if other == f.s {
		f.t.Skip("the harness's New returns one store every time: no second instance to line up across")
	}
	ps, ok := f.s.(store.Semaphores)
	os, ok2 := other.(store.Semaphores)
	if !ok || !ok2 {
		f.t.Skip("the harness's stores keep no permits")
	}
	l := f.lease(f.key(), f.h.long())
	f.takePermit(ps, l, 1)
	defer func() { _ = ps.ReleasePermit(f.ctx, l.Key, l.Token) }()
	hs, err := os.InspectPermits(f.ctx, l.Key)
	if err != nil {
		f.t.Fatalf("InspectPermits through a second store: %v", err)
	}
	if len(hs) == 0 {
		f.t.Skip("the harness's New returns stores that share no data: no second instance to line up across")
	}
	return other
}
