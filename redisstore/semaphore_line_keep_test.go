package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// longWaiter holds the only permit of "k" for an hour through one
// instance, and starts a waiter for it through another, whose retry
// policy is an hour; it returns once the waiter has waited past
// store.PermitLineKeep.
func longWaiter(t *testing.T, ctx context.Context) (s *redisstore.Store, holder *core.Lock, got chan *core.Lock, errs chan error) {
	s = redisstore.New(redistest.Start(t).Client(t))
	holder, err := newLocker(s, core.WithTTL(time.Hour)).Semaphore(1).TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	sem := newLocker(s, core.WithTTL(time.Hour), core.WithRetry(backoff.Constant(time.Hour))).Semaphore(1)
	got, errs = make(chan *core.Lock, 1), make(chan error, 1)
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
	return s, holder, got, errs
}

// A Semaphore's waiter is woken at a release, whatever its retry policy
// and however long it has waited, as a Locker's waiter is: here one with a
// policy of an hour has waited past store.PermitLineKeep when another
// instance releases the key's only permit. It must get the permit then,
// not when its policy or the holder's lease of an hour says to ask again.
// The line's key expires PermitLineKeep after the last waiter asked, so
// the release finds no line and wakes nobody.
func TestSemaphoreLongWaiterWokenAtRelease(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	_, holder, got, errs := longWaiter(t, ctx)
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
		t.Fatalf("the waiter was not woken within %v of the release: it had not asked for longer than store.PermitLineKeep (%v), and lost its place in line", patience, store.PermitLineKeep)
	}
}

// The line is served in arrival order however long a waiter waits: a
// newcomer's TryObtain right after the release is refused, the place being
// the waiter's, who came first.
func TestSemaphoreLongWaiterKeepsItsPlace(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	s, holder, _, _ := longWaiter(t, ctx)
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if lk, err := newLocker(s).Semaphore(1).TryObtain(ctx, "k"); err == nil {
		_ = lk.Release(ctx)
		t.Fatalf("a newcomer got the permit ahead of the waiter who came first: the waiter had not asked for longer than store.PermitLineKeep (%v), and lost its place in line", store.PermitLineKeep)
	}
}
