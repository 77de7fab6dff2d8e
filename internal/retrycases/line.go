package retrycases

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

// RunLine checks, on a store that keeps a line of waiters (not Redlock's,
// which hands the key to nobody) and can say how many wait (Inspector),
// that waiters polling far more often
// than a release comes keep their places: each is served in the order it
// joined, one at a time, whatever its polls in between.
func RunLine(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("an eager policy keeps the line", func(t *testing.T) { eagerLine(t, open(t)) })
}

func eagerLine(t *testing.T, s store.Store) {
	ctx := testCtx(t)
	first, err := locker(s).TryObtain(ctx, "line")
	if err != nil {
		t.Fatal(err)
	}
	const waiters = 4
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i := range waiters {
		w := locker(s, core.WithRetry(backoff.Constant(5*time.Millisecond)))
		wg.Go(func() {
			lk, err := w.Obtain(ctx, "line")
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			time.Sleep(20 * time.Millisecond) // a few of the others' polls
			if err := lk.Release(ctx); err != nil {
				t.Error(err)
			}
		})
		// Join in turn: the next starts once this one stands in line.
		deadline := time.Now().Add(10 * time.Second)
		for {
			h, err := w.Inspect(ctx, "line")
			if err != nil {
				t.Fatal(err)
			}
			if h.Waiting > i {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("waiter %d is not in line after 10 s: %+v", i, h)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if fmt.Sprint(order) != "[0 1 2 3]" {
		t.Fatalf("served in the order %v, want the order they joined, [0 1 2 3]", order)
	}
}
