package core_test

import (
	"testing"
	"time"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/memorystore"
)

// A Semaphore's waiter is woken at a release, whatever its retry policy
// and however long it has waited, as a Locker's waiter is: here one with a
// policy of an hour has waited past store.PermitLineKeep when
// another instance releases the key's only permit. It must get the permit
// then, not when its policy or the holder's lease of an hour says to ask
// again. A waiter that stopped asking for PermitLineKeep is dropped from
// the line by the next attempt of anyone (here a newcomer's, refused),
// so the release wakes nobody.
func TestSemaphoreLongWaiterWokenAtRelease(t *testing.T) {
	s := memorystore.New()
	ctx := ctxT(t, time.Minute)
	holder, err := newLocker(s, core.WithTTL(time.Hour)).Semaphore(1).TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	sem := newLocker(s, core.WithTTL(time.Hour), core.WithRetry(backoff.Constant(time.Hour))).Semaphore(1)
	got := make(chan *core.Lock, 1)
	errs := make(chan error, 1)
	go func() {
		lk, err := sem.Obtain(ctx, "k")
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
	if lk, err := newLocker(s).Semaphore(1).TryObtain(ctx, "k"); err == nil {
		_ = lk.Release(ctx)
		t.Fatal("a newcomer got the permit while it was held")
	}
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	const patience = 15 * time.Second
	select {
	case lk := <-got:
		_ = lk.Release(ctx)
	case err := <-errs:
		t.Fatalf("Obtain: %v", err)
	case <-time.After(patience):
		t.Fatalf("the waiter was not woken within %v of the release: it had stopped asking for longer than store.PermitLineKeep (%v), and lost its place in line", patience, store.PermitLineKeep)
	}
}
