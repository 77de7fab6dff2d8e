package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
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
			if d := handOff(t, ctx, lk, waiter); d >= store.HandOffTimeout/4 {
				t.Fatalf("round %d: the waiter took the lock %v after the release: not woken", round, d)
			}
		}
	})
}

// A killed subscription connection costs latency only: the waiter falls
// back to polling, and the subscription comes back by itself.
func TestWakeSurvivesKilledSubscription(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	mk := func() *core.Locker {
		c := redis.NewClient(redistest.ClientOptions(srv.Addr))
		t.Cleanup(func() { _ = c.Close() })
		return newLocker(redisstore.New(c))
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
	if d := handOff(t, ctx, lk, waiter); d >= store.HandOffTimeout/4 {
		t.Fatalf("after the subscription came back, the waiter took the lock %v after the release: not woken", d)
	}
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
