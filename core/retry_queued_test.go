package core_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/memorystore"
)

// The policy is the schedule of every Obtain, also of one queued behind
// other callers of the same Locker for the same key: under
// Limit(Constant(interval), 2) on a key held for an hour, each of several
// concurrent callers gives up after its own two waits, not after the
// waits of everyone ahead of it in the Locker's queue.
func TestRetryLimitBoundsQueuedCallers(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	s := memorystore.New()
	held, err := newLocker(s).TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(ctx)

	const (
		callers  = 6
		interval = 40 * time.Millisecond
		// Two waits of at most 1.5 × interval, with a generous margin for a
		// loaded machine; well below the callers' waits added up.
		within = 2*interval*3/2 + 150*time.Millisecond
	)
	waiter := newLocker(s, core.WithRetry(backoff.Limit(backoff.Constant(interval), 2)))
	took := make([]time.Duration, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			start := time.Now()
			_, errs[i] = waiter.Obtain(context.WithoutCancel(ctx), "k")
			took[i] = time.Since(start)
		})
	}
	wg.Wait()
	for i := range callers {
		if !errors.Is(errs[i], core.ErrNotObtained) {
			t.Fatalf("caller %d: %v, want ErrNotObtained", i, errs[i])
		}
		if took[i] > within {
			t.Fatalf("a caller gave up after %v, want within %v (two waits of %v ±50%%); all: %v", took[i], within, interval, took)
		}
	}
}

// gatedAcquires is a polling store (no wake-ups, no line) whose acquires,
// once the gate is shut, each wait for it to open: the caller whose
// attempt is held there keeps its Locker's turn for the key as long as
// the test likes.
type gatedAcquires struct {
	core.Store
	shut    chan struct{} // closed: acquires wait at the gate
	entered chan struct{} // an acquire reached the shut gate
	open    chan struct{} // closed: the gate is open again
}

func newGatedAcquires(s core.Store) *gatedAcquires {
	return &gatedAcquires{Store: s, shut: make(chan struct{}), entered: make(chan struct{}, 1), open: make(chan struct{})}
}

func (g *gatedAcquires) Acquire(ctx context.Context, l store.Lease) (store.Grant, error) {
	select {
	case <-g.shut:
		select {
		case g.entered <- struct{}{}:
		default:
		}
		select {
		case <-g.open:
		case <-ctx.Done():
			return store.Grant{}, ctx.Err()
		}
	default:
	}
	return g.Store.Acquire(ctx, l)
}

// A Limit policy is a count of waits, however many: a caller queued behind
// the Locker's caller in turn gives up after its own waits, also when they
// are more than the Locker draws ahead, and also while the caller in turn
// is held up in the store for as long as it takes.
func TestRetryLimitBoundsQueuedCallersOfManyWaits(t *testing.T) {
	for _, waits := range []int{2, 63, 64, 65, 200} {
		t.Run(fmt.Sprint(waits), func(t *testing.T) {
			ctx := ctxT(t, time.Minute)
			s := memorystore.New()
			held, err := newLocker(s).TryObtain(ctx, "k")
			if err != nil {
				t.Fatal(err)
			}
			defer held.Release(ctx)

			g := newGatedAcquires(s)
			w := newLocker(g, core.WithRetry(backoff.Limit(backoff.Constant(time.Millisecond), waits)))
			_, taken := w.TryObtain(ctx, "k")
			if !errors.Is(taken, core.ErrNotObtained) {
				t.Fatalf("TryObtain of a held key: %v", taken)
			}
			close(g.shut)
			ahead := make(chan error, 1)
			go func() {
				_, err := w.ObtainAfter(ctx, "k", taken)
				ahead <- err
			}()
			defer func() {
				close(g.open)
				if err := <-ahead; !errors.Is(err, core.ErrNotObtained) {
					t.Errorf("the caller ahead: %v, want ErrNotObtained", err)
				}
			}()
			<-g.entered // the caller ahead has the turn, its attempt held

			queued := make(chan error, 1)
			go func() {
				_, err := w.ObtainAfter(ctx, "k", taken)
				queued <- err
			}()
			// Its own waits are about waits milliseconds; the deadline is for
			// a machine under any load, far from a timing check.
			select {
			case err := <-queued:
				if !errors.Is(err, core.ErrNotObtained) {
					t.Fatalf("the queued caller: %v, want ErrNotObtained", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("a caller queued with Limit(Constant(1ms), %d) is still waiting after 20 s, for the caller ahead of it", waits)
			}
		})
	}
}
