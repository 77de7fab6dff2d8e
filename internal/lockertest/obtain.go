package lockertest

import (
	"context"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
)

// Obtained is what an Obtain returned, and when.
type Obtained struct {
	Lock *core.Lock
	Err  error
	At   time.Time
}

// ObtainAsync runs l.Obtain(ctx, key) on a goroutine of its own.
func ObtainAsync(ctx context.Context, l *core.Locker, key string) chan Obtained {
	ch := make(chan Obtained, 1)
	go func() {
		lk, err := l.Obtain(ctx, key)
		ch <- Obtained{lk, err, time.Now()}
	}()
	return ch
}

// HandOver releases first and returns the lock its waiter, whose Obtain
// reports on got, takes; the lock is released when the test ends.
func HandOver(t *testing.T, ctx context.Context, first *core.Lock, got chan Obtained) *core.Lock {
	t.Helper()
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	o := <-got
	if o.Err != nil {
		t.Fatal(o.Err)
	}
	t.Cleanup(func() { _ = o.Lock.Release(context.WithoutCancel(ctx)) })
	return o.Lock
}

// WaitFor polls cond for up to 3s: what it waits for happens in the
// background, in well under that, or fails the test.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
