package redisstore_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/lockertest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

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
	if d := lockertest.HandOff(t, ctx, lk, waiter); d >= store.HandOffTimeout/4 {
		t.Fatalf("after the subscription came back, the waiter took the lock %v after the release: not woken", d)
	}
}

// Obtain with a context that has ended is ErrUnavailable, never
// ErrNotObtained, also right after a waiter, when the subscription lingers
// open and Obtain joins the line with its first attempt (core's tests check
// the memory store).
func TestObtainCancelledBeforeAnyAnswerIsUnavailable(t *testing.T) {
	lockertest.ObtainCancelledBeforeAnyAnswer(t, redisstore.New(redistest.Start(t).Client(t)), true)
}
