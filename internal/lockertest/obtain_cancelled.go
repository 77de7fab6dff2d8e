package lockertest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
)

// ObtainCancelledBeforeAnyAnswer checks Locker.Obtain's doc on s: "when
// ctx ends before the store answered its first attempt (or had ended
// already), it is ErrUnavailable and the context's error, as for
// TryObtain: nothing says the key was taken." That holds too when the
// subscription is already listening (the memory store's always; the Redis
// store's right after a waiter) and Obtain joins the line with its first
// attempt: listening has a waiter wait first, so that the subscription
// lingers open.
func ObtainCancelledBeforeAnyAnswer(t *testing.T, s core.Store, listening bool) {
	l := NewLocker(s)
	ctx := Context(t, 10*time.Second)
	if listening {
		// A waiter a moment ago: the subscription now lingers open.
		held, err := NewLocker(s).Obtain(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		go func() { time.Sleep(50 * time.Millisecond); _ = held.Release(ctx) }()
		lk, err := l.Obtain(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		if err := lk.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// The key is free now. Several tries: wait() selects at random
	// between the turn and ctx.Done.
	for i := range 20 {
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		_, err := l.Obtain(cancelled, "k")
		if !errors.Is(err, core.ErrUnavailable) || errors.Is(err, core.ErrNotObtained) {
			t.Fatalf("try %d: Obtain with a cancelled ctx on a free key: %v (ErrNotObtained=%v, ErrUnavailable=%v); want ErrUnavailable, as TryObtain: %v",
				i, err, errors.Is(err, core.ErrNotObtained), errors.Is(err, core.ErrUnavailable), tryErr(l, cancelled))
		}
	}
}

func tryErr(l *core.Locker, ctx context.Context) error {
	_, err := l.TryObtain(ctx, "k")
	return err
}
