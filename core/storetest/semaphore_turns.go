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
	var sems [2]*core.Semaphore
	for i := range sems {
		sems[i] = f.locker(core.WithTTL(h.long()), core.WithRetry(backoff.Constant(time.Minute))).Semaphore(n)
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
