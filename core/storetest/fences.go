package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

var fencePromises = []promise{
	{"after-release", fenceAfterRelease},
	{"after-expiry", fenceAfterExpiry},
	{"contention", fencesUnderContention},
}

// The next holder after a release gets a greater fence, every time.
func fenceAfterRelease(t *testing.T, h Harness) {
	f := open(t, h)
	key := f.key()
	var last uint64
	for i := range 5 {
		l := f.lease(key, h.long())
		g := f.acquire(l)
		if g.Fence <= last {
			t.Fatalf("holder %d got fence %d after %d", i, g.Fence, last)
		}
		last = g.Fence
		f.release(l)
	}
}

// The next holder after a lease ran out gets a greater fence.
func fenceAfterExpiry(t *testing.T, h Harness) {
	f := open(t, h)
	key := f.key()
	old := f.acquire(f.lease(key, h.short()))
	time.Sleep(h.short())
	var g store.Grant
	f.waitFor("the lapsed lease to free the key", func() bool {
		var err error
		g, err = f.s.Acquire(f.ctx, f.lease(key, h.long()))
		return err == nil
	})
	if g.Fence <= old.Fence {
		t.Fatalf("the holder after a lapsed lease got fence %d after %d", g.Fence, old.Fence)
	}
}

// Lockers in contention, some holders releasing and some letting their
// lease run out: the fence each holder sees inside is above the one before.
func fencesUnderContention(t *testing.T, h Harness) {
	f := open(t, h)
	key := random()
	var mu sync.Mutex
	var last uint64
	var wg sync.WaitGroup
	check := func(lk *core.Lock) {
		mu.Lock()
		defer mu.Unlock()
		if lk.Fence() <= last {
			t.Errorf("fence went from %d to %d", last, lk.Fence())
		}
		last = lk.Fence()
	}
	for g := range 6 {
		l := f.locker(core.WithTTL(max(time.Second, 5*h.short())),
			core.WithRetry(backoff.Exponential(time.Millisecond, 20*time.Millisecond)))
		wg.Go(func() {
			for range 4 {
				if err := l.Do(f.ctx, key, func(ctx context.Context) error {
					lk, _ := core.FromContext(ctx)
					check(lk)
					return nil
				}); err != nil {
					t.Errorf("Do: %v", err)
					return
				}
			}
		})
		if g%3 == 0 { // a holder that never releases: its lease runs out
			lapser := f.locker(core.WithTTL(h.short()), core.WithoutWatchdog(),
				core.WithRetry(backoff.Exponential(time.Millisecond, 20*time.Millisecond)))
			wg.Go(func() {
				lk, err := lapser.Obtain(f.ctx, key)
				if err != nil {
					t.Errorf("Obtain: %v", err)
					return
				}
				check(lk)
				<-lk.Lost()
			})
		}
	}
	wg.Wait()
}
