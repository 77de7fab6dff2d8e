package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

var linePromises = []promise{
	{"served-in-turn", lineServedInTurn},
	{"leave-passes-turn", lineLeavePassesTurn},
	{"dead-waiter-bound", lineDeadWaiterBound},
	{"wake-on-release", lineWakeOnRelease},
	{"locker-served-in-turn", lineLockerServedInTurn},
	{"locker-wakes-waiter", lineLockerWakesWaiter},
}

const linesMeaning = "no lines across instances: waiters poll with their backoff"

// waiterIn is a waiter of instance, as a Locker names its waiters.
func waiterIn(instance string) string { return instance + "/" + random() }

// waitLease is the lease of one acquire of waiter in line, as a Locker's:
// on a store that hands locks over (Granter) every acquire of a wait
// carries the token the lock is handed over under; on others a token
// serves one acquire (a store may cancel one it refused).
func (f *fixture) waitLease(key, waiter string) store.Lease {
	l := f.lease(key, f.h.long())
	if _, ok := f.s.(store.Granter); ok {
		l.Token = store.HandedOverToken(waiter)
	}
	return l
}

// queue has waiter stand in key's line: its acquire finds the key taken.
func (f *fixture) queue(w store.Waker, l store.Lease, waiter string) {
	f.t.Helper()
	g, rec, err := w.AcquireQueued(f.ctx, l, waiter, false)
	if !errors.Is(err, core.ErrNotObtained) {
		f.t.Fatalf("AcquireQueued of a held key for %s: %+v, %q, %v; want ErrNotObtained", waiter, g, rec, err)
	}
}

// Waiters that joined a key's line in turn are handed the lock in that
// turn, each with a greater fence, and nobody else gets it meanwhile.
func lineServedInTurn(t *testing.T, h Harness) {
	f := open(t, h)
	w := as[store.Waker](f, "store.Waker", linesMeaning)
	key := f.key()
	holder := f.lease(key, h.long())
	last := f.acquire(holder).Fence
	instance := random()
	var waiters []string
	for range 3 {
		waiter := waiterIn(instance)
		waiters = append(waiters, waiter)
		f.queue(w, f.waitLease(key, waiter), waiter)
	}
	f.release(holder)
	for i, waiter := range waiters {
		for j := i + 1; j < len(waiters); j++ {
			f.queue(w, f.waitLease(key, waiters[j]), waiters[j])
		}
		f.mustBeTaken(key, fmt.Sprintf("waiter %d's turn, for a caller not in line", i))
		claim := f.waitLease(key, waiter)
		g, _, err := w.AcquireQueued(f.ctx, claim, waiter, false)
		if err != nil {
			t.Fatalf("waiter %d claims its turn: %v", i, err)
		}
		if g.Fence <= last {
			t.Fatalf("waiter %d got fence %d after %d", i, g.Fence, last)
		}
		last = g.Fence
		f.release(claim)
	}
	f.mustBeFree(key, "after the last waiter released")
}

// A waiter that leaves when the lock was handed to it passes it on to the
// next in line at once.
func lineLeavePassesTurn(t *testing.T, h Harness) {
	f := open(t, h)
	w := as[store.Waker](f, "store.Waker", linesMeaning)
	key := f.key()
	holder := f.lease(key, h.long())
	f.acquire(holder)
	instance := random()
	first, second := waiterIn(instance), waiterIn(instance)
	f.queue(w, f.waitLease(key, first), first)
	f.queue(w, f.waitLease(key, second), second)
	f.release(holder)
	if err := w.Leave(f.ctx, key, first); err != nil {
		t.Fatalf("Leave of the waiter the lock was handed to: %v", err)
	}
	f.mustBeTaken(key, "handed on to the second waiter, for a caller not in line")
	sl := f.waitLease(key, second)
	if _, _, err := w.AcquireQueued(f.ctx, sl, second, false); err != nil {
		t.Fatalf("the second waiter claims the turn the first passed on: %v", err)
	}
	f.release(sl)
	if err := w.Leave(f.ctx, key, second); err != nil {
		t.Fatalf("Leave of a waiter no longer in line: %v", err)
	}
	f.mustBeFree(key, "after the second waiter released")
}

// A waiter at the head of the line that never claims the lock handed to
// it (it died) keeps the key from others for HandOffBound at most.
func lineDeadWaiterBound(t *testing.T, h Harness) {
	f := open(t, h)
	w := as[store.Waker](f, "store.Waker", linesMeaning)
	key := f.key()
	holder := f.lease(key, h.long())
	f.acquire(holder)
	dead := waiterIn(random())
	f.queue(w, f.waitLease(key, dead), dead)
	f.release(holder)
	released := time.Now()
	if in, ok := f.s.(store.Inspector); ok {
		hd, err := in.Inspect(f.ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if hd.Held && hd.Lease > h.handOffBound() {
			t.Fatalf("the lock handed to a waiter runs for %v, more than the bound %v: %+v", hd.Lease, h.handOffBound(), hd)
		}
	}
	// The bound is the promise; the margin is the store's clock grain.
	time.Sleep(time.Until(released.Add(h.handOffBound() + max(50*time.Millisecond, h.MinTTL/4))))
	f.mustBeFree(key, fmt.Sprintf("%v after a release handed the lock to a waiter that never claims it", h.handOffBound()))
}

// A release tells the waiter at the head of the line, through its
// instance's subscription: it need not poll.
func lineWakeOnRelease(t *testing.T, h Harness) {
	f := open(t, h)
	w := as[store.Waker](f, "store.Waker", linesMeaning)
	key := f.key()
	instance := random()
	type wake struct{ key, waiter string }
	woken := make(chan wake, 64)
	sub := w.Subscribe(h.prefix(), instance, func(key, waiter string) {
		select {
		case woken <- wake{key, waiter}:
		default:
		}
	})
	done, err := sub.Hold(f.ctx)
	if err != nil {
		t.Fatalf("Subscription.Hold: %v", err)
	}
	defer done()
	holder := f.lease(key, h.long())
	f.acquire(holder)
	waiter := waiterIn(instance)
	f.queue(w, f.waitLease(key, waiter), waiter)
	f.release(holder)
	timeout := time.After(h.patience())
	for {
		select {
		case got := <-woken:
			if (got.key == key || got.key == store.WakeAll) && (got.waiter == waiter || got.waiter == store.WakeAll) {
				wl := f.waitLease(key, waiter)
				if _, _, err := w.AcquireQueued(f.ctx, wl, waiter, false); err != nil {
					t.Fatalf("the woken waiter claims the lock: %v", err)
				}
				f.release(wl)
				return
			}
		case <-timeout:
			t.Fatalf("no wake-up for %s of %s within %v of the release", waiter, key, h.patience())
		}
	}
}

// lockerBackoff is a retry policy so slow that a waiter served in time
// was woken, not polling.
func lockerBackoff() backoff.Policy { return backoff.Constant(time.Minute) }

// Through Lockers, one per instance: waiters that joined in turn get the
// lock in that turn, with growing fences. Each waiter is seen in line
// (Inspector) before the next one starts.
func lineLockerServedInTurn(t *testing.T, h Harness) {
	f := open(t, h)
	as[store.Waker](f, "store.Waker", linesMeaning)
	in := as[store.Inspector](f, "store.Inspector", "the suite cannot tell when a Locker's waiter stands in line")
	key := random()
	first := f.locker(core.WithTTL(h.long()))
	skey, _ := first.StoreKey(key)
	lk, err := first.TryObtain(f.ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []int
	var fences []uint64
	var wg sync.WaitGroup
	const n = 4
	for i := range n {
		l := f.locker(core.WithTTL(h.long()))
		wg.Go(func() {
			next, err := l.Obtain(f.ctx, key)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order, fences = append(order, i), append(fences, next.Fence())
			mu.Unlock()
			if err := next.Release(f.ctx); err != nil {
				t.Error(err)
			}
		})
		f.waitFor(fmt.Sprintf("waiter %d to stand in line", i), func() bool {
			hd, err := in.Inspect(f.ctx, skey)
			return err == nil && hd.Waiting == i+1
		})
	}
	if err := lk.Release(f.ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if fmt.Sprint(order) != "[0 1 2 3]" {
		t.Fatalf("served in the order %v, want the order they joined", order)
	}
	last := lk.Fence()
	for i, fence := range fences {
		if fence <= last {
			t.Fatalf("waiter %d got fence %d after %d", i, fence, last)
		}
		last = fence
	}
}

// Through a Locker: a release wakes a waiter of the same Locker, whose
// backoff alone would keep it sleeping a minute; on any store.
func lineLockerWakesWaiter(t *testing.T, h Harness) {
	f := open(t, h)
	l := f.locker(core.WithTTL(h.long()), core.WithRetry(lockerBackoff()))
	key := random()
	held, err := l.TryObtain(f.ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		lk, err := l.Obtain(f.ctx, key)
		if err == nil {
			err = lk.Release(f.ctx)
		}
		got <- err
	}()
	time.Sleep(50 * time.Millisecond) // the waiter has taken its first look
	if err := held.Release(f.ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(h.patience()): // its backoff alone: a minute
		t.Fatalf("the waiter was not woken by the release within %v", h.patience())
	}
}
