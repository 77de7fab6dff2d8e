package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

// A waiter in a permit line keeps its place however long it waits and
// whatever its retry policy, as a Locker's waiter does: here one whose
// policy is an hour has waited past store.PermitLineKeep when the key's
// only permit is given back. A newcomer right after the release is
// refused, the place being the waiter's, who came first; and the waiter
// is woken: it gets the permit then, not when its policy or the holder's
// long lease says to ask again.
func semaphoreLineKeep(t *testing.T, h Harness) {
	f := open(t, h)
	as[store.PermitLines](f, "store.PermitLines", "its Semaphores' waiters do not stand in one line across instances, but poll")
	key := random()
	holder, err := f.locker(core.WithTTL(h.long())).Semaphore(1).TryObtain(f.ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	sem := f.locker(core.WithTTL(h.long()), core.WithRetry(backoff.Constant(time.Hour))).Semaphore(1)
	got, errs := make(chan *core.Lock, 1), make(chan error, 1)
	go func() {
		lk, err := sem.Obtain(f.ctx, key)
		if err != nil {
			errs <- err
			return
		}
		got <- lk
	}()
	time.Sleep(store.PermitLineKeep + time.Second)
	select {
	case <-got:
		t.Fatal("the waiter got the permit while it was held")
	case err := <-errs:
		t.Fatalf("Obtain: %v", err)
	default:
	}
	if err := holder.Release(f.ctx); err != nil {
		t.Fatal(err)
	}
	lk, err := f.locker().Semaphore(1).TryObtain(f.ctx, key)
	if err == nil {
		_ = lk.Release(f.ctx)
		t.Fatalf("a newcomer got the permit ahead of the waiter who came first: the waiter had not asked for longer than store.PermitLineKeep (%v), and lost its place in line", store.PermitLineKeep)
	}
	if !errors.Is(err, core.ErrNotObtained) {
		t.Fatalf("the newcomer's TryObtain: %v", err)
	}
	select {
	case lk := <-got:
		_ = lk.Release(f.ctx)
	case err := <-errs:
		t.Fatalf("Obtain: %v", err)
	case <-time.After(h.patience()):
		t.Fatalf("the waiter was not woken within %v of the release", h.patience())
	}
}
