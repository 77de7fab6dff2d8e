package core_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
)

// A release on one Locker wakes a waiter on another (an instance) at once:
// it takes the lock long before its first poll could have come.
func TestWakeAcrossLockers(t *testing.T) {
	forEachStore(t, func(t *testing.T, s core.Store, _ func(string)) {
		ctx := ctxT(t, 10*time.Second)
		holder, waiter := newLocker(s), newLocker(s)
		for round := range 3 {
			lk, err := holder.TryObtain(ctx, "k")
			if err != nil {
				t.Fatal(err)
			}
			if d := handOff(t, ctx, lk, waiter); d >= core.HandOffTimeout/4 {
				t.Fatalf("round %d: the waiter took the lock %v after the release: not woken", round, d)
			}
		}
	})
}

// Waiters on several instances are served in the order they joined the
// line, one at a time.
func TestLineServesInOrder(t *testing.T) {
	for _, sc := range contractStores {
		if sc.name == "redlock" { // no line on Redlock
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			s, _ := sc.open(t)
			ctx := ctxT(t, 10*time.Second)
			holder := newLocker(s)
			lk, err := holder.TryObtain(ctx, "k")
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var order []int
			var wg sync.WaitGroup
			for i := range 5 {
				l := newLocker(s)
				wg.Go(func() {
					next, err := l.Obtain(ctx, "k")
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					order = append(order, i)
					mu.Unlock()
					time.Sleep(5 * time.Millisecond)
					_ = next.Release(ctx)
				})
				time.Sleep(40 * time.Millisecond) // join in turn
			}
			_ = lk.Release(ctx)
			wg.Wait()
			if fmt.Sprint(order) != "[0 1 2 3 4]" {
				t.Fatalf("served in the order %v, want the order they joined", order)
			}
		})
	}
}

// A waiter at the head of the line that died holds the key up for
// HandOffTimeout at most; one that leaves passes its turn on at once.
func TestDeadHeadOfLineIsBounded(t *testing.T) {
	c := redistest.Start(t).Client(t)
	st := core.NewRedisStore(c)
	ctx := ctxT(t, 10*time.Second)
	key := "reqlock:{line}"
	if _, err := st.Acquire(ctx, core.Lease{Key: key, Token: "holder", TTL: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	for _, ghost := range []string{"dead", "leaving"} {
		if _, _, err := st.AcquireQueued(ctx, core.Lease{Key: key, Token: ghost + "-token", TTL: time.Second}, ghost, false); !errors.Is(err, core.ErrNotObtained) {
			t.Fatalf("%s joins the line: %v", ghost, err)
		}
	}
	if err := st.Release(ctx, key, "holder"); err != nil {
		t.Fatal(err)
	}
	if v, left := c.Get(ctx, key).Val(), c.PTTL(ctx, key).Val(); v != "~dead" || left > core.HandOffTimeout {
		t.Fatalf("after the release the lock holds %q for %v, want a hand-off to the head for at most %v", v, left, core.HandOffTimeout)
	}
	// The dead waiter never claims it: the hand-off runs out, and the key
	// is free.
	waitFor(t, "the dead head's hand-off to run out", func() bool { return c.Exists(ctx, key).Val() == 0 })

	// The next holder releases to the one left in line, which leaves: the
	// lock goes on at once.
	if _, err := st.Acquire(ctx, core.Lease{Key: key, Token: "second", TTL: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := st.Release(ctx, key, "second"); err != nil {
		t.Fatal(err)
	}
	if v := c.Get(ctx, key).Val(); v != "~leaving" {
		t.Fatalf("lock holds %q, want a hand-off to the waiter still in line", v)
	}
	if err := st.Leave(ctx, key, "leaving"); err != nil {
		t.Fatal(err)
	}
	if n := c.Exists(ctx, key, key+":q").Val(); n != 0 {
		t.Fatalf("%d keys left after the last waiter left", n)
	}
}

// A killed subscription connection costs latency only: the waiter falls
// back to polling, and the subscription comes back by itself.
func TestWakeSurvivesKilledSubscription(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	mk := func() *core.Locker {
		c := redis.NewClient(redistest.ClientOptions(srv.Addr))
		t.Cleanup(func() { _ = c.Close() })
		return newLocker(core.NewRedisStore(c))
	}
	holder, waiter := mk(), mk()
	ctx := ctxT(t, 20*time.Second)
	for round := range 3 {
		lk, err := holder.TryObtain(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		go func() {
			next, err := waiter.Obtain(ctx, "k")
			if err == nil {
				_ = next.Release(ctx)
			}
			got <- err
		}()
		time.Sleep(30 * time.Millisecond)
		if round == 1 {
			if err := admin.Do(ctx, "client", "kill", "type", "pubsub").Err(); err != nil {
				t.Fatal(err)
			}
		}
		_ = lk.Release(ctx)
		if err := <-got; err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	// Round 2 ran on the subscription go-redis restored: it still wakes.
	lk, _ := holder.TryObtain(ctx, "k")
	if d := handOff(t, ctx, lk, waiter); d >= core.HandOffTimeout/4 {
		t.Fatalf("after the subscription came back, the waiter took the lock %v after the release: not woken", d)
	}
}

// Thousands of waiters on many Lockers give up at once: every one answers,
// the line empties, and no goroutine is left behind.
func TestManyWaitersGiveUp(t *testing.T) {
	c := redistest.Start(t).Client(t)
	st := core.NewRedisStore(c)
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

// handOff has waiter wait for lk's key, releases lk once the waiter is in
// line, and returns how long after the release the waiter had the lock. A
// poll comes HandOffTimeout/4 after the waiter's last attempt at the
// earliest; a wake-up well before that.
func handOff(t *testing.T, ctx context.Context, lk *core.Lock, waiter *core.Locker) time.Duration {
	t.Helper()
	got := make(chan time.Time, 1)
	go func() {
		next, err := waiter.Obtain(ctx, lk.Key())
		at := time.Now()
		if err == nil {
			_ = next.Release(ctx)
		}
		got <- at
	}()
	time.Sleep(30 * time.Millisecond) // the waiter is listening and in line
	released := time.Now()
	if err := lk.Release(ctx); err != nil {
		t.Fatal(err)
	}
	return (<-got).Sub(released)
}
