package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

// Waiters of one Semaphore are admitted in the order they came, one per
// permit given back.
func semaphoreLineInTurn(t *testing.T, h Harness, n int) {
	f := open(t, h)
	f.permits()
	sem := f.locker(core.WithTTL(h.long())).Semaphore(n)
	lineInTurn(t, f, sem, func(int) *core.Semaphore { return sem })
}

// On a store that keeps permit lines, waiters of Semaphores of different
// Lockers (instances) are admitted in the order they came, woken by the
// releases of yet another, with a retry policy that would not poll before
// the test's patience runs out.
func semaphoreLineAcrossLockers(t *testing.T, h Harness, n int) {
	f := open(t, h)
	as[store.PermitLines](f, "store.PermitLines", "its Semaphores' waiters do not stand in one line across instances, but poll")
	holders := f.locker(core.WithTTL(h.long())).Semaphore(n)
	waiters := make([]*core.Semaphore, 3)
	for i := range waiters {
		waiters[i] = f.locker(core.WithTTL(h.long()), core.WithRetry(backoff.Constant(time.Minute))).Semaphore(n)
	}
	lineInTurn(t, f, holders, func(i int) *core.Semaphore { return waiters[i] })
}

// The same with the waiters on two stores of the harness's (two clients of
// the same data, as two processes have), alternately, and the holders on
// the first: each release, through one client, wakes a waiter of another.
func semaphoreLineAcrossStores(t *testing.T, h Harness, n int) {
	f := open(t, h)
	as[store.PermitLines](f, "store.PermitLines", "its Semaphores' waiters do not stand in one line across instances, but poll")
	stores := [2]core.Store{f.twin(), f.s}
	holders := f.locker(core.WithTTL(h.long())).Semaphore(n)
	waiters := make([]*core.Semaphore, 3)
	for i := range waiters {
		waiters[i] = f.lockerOn(stores[i%2], core.WithTTL(h.long()), core.WithRetry(backoff.Constant(time.Minute))).Semaphore(n)
	}
	lineInTurn(t, f, holders, func(i int) *core.Semaphore { return waiters[i] })
}

// lineInTurn fills key's n permits through sem, starts three waiters,
// each through waiter(i), one after the other, and releases the permits
// one at a time: each release must admit the next waiter in arrival order.
func lineInTurn(t *testing.T, f *fixture, sem *core.Semaphore, waiter func(int) *core.Semaphore) {
	h := f.h
	n := sem.Limit()
	key := random()
	var held []*core.Lock
	for range n {
		lk, err := sem.TryObtain(f.ctx, key)
		if err != nil {
			t.Fatalf("TryObtain with fewer than %d permits held: %v", n, err)
		}
		held = append(held, lk)
	}
	const waiters = 3
	admitted := make(chan int, waiters)
	permits := make(chan *core.Lock, waiters)
	errs := make(chan error, waiters)
	for i := range waiters {
		go func() {
			lk, err := waiter(i).Obtain(f.ctx, key)
			if err != nil {
				errs <- err
				return
			}
			admitted <- i
			permits <- lk
		}()
		// Arrival order: each waiter stands in line before the next comes.
		time.Sleep(h.short() / 4)
	}
	defer func() {
		for _, lk := range held {
			_ = lk.Release(context.Background())
		}
	}()
	for want := range waiters {
		select {
		case i := <-admitted:
			t.Fatalf("waiter %d admitted with every permit held", i)
		default:
		}
		if err := held[0].Release(f.ctx); err != nil {
			t.Fatalf("Release of a permit: %v", err)
		}
		held = held[1:]
		select {
		case i := <-admitted:
			if i != want {
				t.Fatalf("waiter %d admitted when waiter %d came first", i, want)
			}
			held = append(held, <-permits)
		case err := <-errs:
			t.Fatalf("a waiter gave up: %v", err)
		case <-time.After(h.patience()):
			t.Fatalf("no waiter admitted within %v of a release", h.patience())
		}
	}
}

// permitCancelSeen is a store whose permit cancels the test sees.
type permitCancelSeen struct {
	core.Store
	store.Semaphores
	seen chan struct{}
}

func (s *permitCancelSeen) CancelPermit(ctx context.Context, l store.Lease) error {
	err := s.Semaphores.CancelPermit(ctx, l)
	if err == nil || errors.Is(err, core.ErrNotHeld) {
		select {
		case s.seen <- struct{}{}:
		default:
		}
	}
	return err
}

// A permit acquire whose caller gave up (its bytes held on the way) is
// cancelled by the Locker; when it lands, it takes nothing.
func semaphoreLateAcquire(t *testing.T, h Harness) {
	f := open(t, h)
	f.permits()
	if h.Slow == nil {
		t.Skip("the harness has no Slow hook: the store's own tests must show that a permit acquire landing after its caller gave up takes nothing")
	}
	slow := h.Slow(t)
	ps, ok := slow.Store.(store.Semaphores)
	if !ok {
		t.Fatal("the Slow hook's store keeps no permits, though the harness's stores do")
	}
	seen := &permitCancelSeen{Store: slow.Store, Semaphores: ps, seen: make(chan struct{}, 1)}
	sem := f.lockerOn(seen, core.WithTTL(h.long())).Semaphore(1)
	warm, err := sem.TryObtain(f.ctx, random())
	if err != nil {
		t.Fatal(err)
	}
	_ = warm.Release(f.ctx)
	key := random()
	skey, _ := f.locker().StoreKey(key)
	land := slow.Hold(t, skey)
	short, cancel := context.WithTimeout(f.ctx, giveUp)
	defer cancel()
	if lk, err := sem.TryObtain(short, key); err == nil {
		_ = lk.Release(f.ctx)
		t.Fatal("the held permit acquire was answered: the Slow hook held nothing")
	}
	select {
	case <-seen.seen:
	case <-time.After(h.patience()):
		t.Fatalf("the Locker did not cancel the permit acquire it gave up on within %v", h.patience())
	}
	land()
	if hs, err := ps.InspectPermits(f.ctx, skey); err != nil || len(hs) != 0 {
		t.Fatalf("after the given-up permit acquire landed: %d permits listed (%v), want none", len(hs), err)
	}
	next, err := f.lockerOn(slow.Store).Semaphore(1).TryObtain(f.ctx, key)
	if err != nil {
		t.Fatalf("after the given-up permit acquire landed the key is full (%v): it took a permit for nobody", err)
	}
	_ = next.Release(f.ctx)
}
