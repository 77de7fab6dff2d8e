package core_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore"
)

// Locker.Obtain's doc: "when ctx ends before the store answered its first
// attempt (or had ended already), it is ErrUnavailable and the context's
// error, as for TryObtain: nothing says the key was taken." That holds too
// when the subscription is already listening (memorystore.Store always; redisstore.Store
// right after a waiter) and Obtain joins the line with its first attempt.
func TestObtainCancelledBeforeAnyAnswerIsUnavailable(t *testing.T) {
	for _, name := range []string{"memory", "redis-listening"} {
		t.Run(name, func(t *testing.T) {
			var s core.Store
			if name == "memory" {
				s = memorystore.New()
			} else {
				s = redisstore.New(redistest.Start(t).Client(t))
			}
			l := newLocker(s)
			ctx := ctxT(t, 10*time.Second)
			if name != "memory" {
				// A waiter a moment ago: the subscription now lingers open.
				held, err := newLocker(s).Obtain(ctx, "k")
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
		})
	}
}

func tryErr(l *core.Locker, ctx context.Context) error {
	_, err := l.TryObtain(ctx, "k")
	return err
}

// Thousands of waiters on many Lockers give up at once: every one answers,
// the line empties, and no goroutine is left behind.
func TestManyWaitersGiveUp(t *testing.T) {
	c := redistest.Start(t).Client(t)
	st := redisstore.New(c)
	ctx := ctxT(t, 20*time.Second)
	holder := newLocker(st)
	lk, err := holder.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release(ctx)
	base := runtime.NumGoroutine()
	var wg sync.WaitGroup
	for range 20 {
		l := newLocker(st)
		for range 100 {
			wg.Go(func() {
				wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
				defer cancel()
				// Taken, or (a waiter whose attempts the loaded store did
				// not answer in time) unavailable: either way, given up.
				_, err := l.Obtain(wctx, "k")
				if !errors.Is(err, context.DeadlineExceeded) ||
					!errors.Is(err, core.ErrNotObtained) && !errors.Is(err, core.ErrUnavailable) {
					t.Errorf("a waiter that gave up: %v", err)
				}
			})
		}
	}
	wg.Wait()
	skey, _ := holder.StoreKey("k")
	waitFor(t, "the line to empty", func() bool { return c.LLen(ctx, skey+":q").Val() == 0 })
	waitFor(t, "the waiters' goroutines to end", func() bool { return runtime.NumGoroutine() <= base+10 })
}
