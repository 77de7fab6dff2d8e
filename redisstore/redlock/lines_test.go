package redlock_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/lockertest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore/redlock"
)

// On Redlock, a wait that gives up while one holder keeps the lock (the
// watchdog renews it) leaves the line on every node: the line holds the
// waiters alive, not every wait ever made.
func TestRedlockLineEmptiesWhenWaitersGiveUp(t *testing.T) {
	_, clients := startRedlock(t, 3)
	s := redlock.New(clients...)
	ctx := ctxT(t, 30*time.Second)
	holder := newLocker(s, core.WithTTL(time.Second))
	lk, err := holder.Obtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release(ctx)
	skey, _ := holder.StoreKey("k")

	const gaveUp = 40
	w := newLocker(s, core.WithTTL(time.Second))
	for range gaveUp {
		short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		if _, err := w.Obtain(short, "k"); err == nil {
			t.Fatal("obtained a held lock")
		}
		cancel()
	}
	time.Sleep(100 * time.Millisecond) // any background Leave
	for i, c := range clients {
		n, err := c.LLen(context.Background(), skey+":q").Result()
		if err != nil {
			t.Fatal(err)
		}
		ttl := c.PTTL(context.Background(), skey+":q").Val()
		if n > 1 {
			t.Errorf("node %d: line of %q holds %d entries (expires in %v) with no waiter alive; want 0", i, skey, n, ttl)
		}
	}
}

// A Redlock waiter that wins on a quorum while one node still holds the
// previous holder's lock (its release there is held up) joined the line on
// that node: it leaves it once it has won, rather than stand there as a
// waiter until the held release lands or the line expires.
func TestRedlockWinnerLeavesLinesItJoined(t *testing.T) {
	servers, clients := startRedlock(t, 5)
	ctx := ctxT(t, 20*time.Second)
	p := faultproxy.Start(t, servers[4].Addr)
	slow := redis.NewClient(redistest.ClientOptions(p.Addr()))
	t.Cleanup(func() { _ = slow.Close() })
	viaProxy := append(slices.Clone(clients[:4]), redis.UniversalClient(slow))
	holder := newLocker(redlock.New(viaProxy...), core.WithTTL(5*time.Second))
	waiter := newLocker(redlock.New(clients...), core.WithTTL(5*time.Second))
	skey, _ := holder.StoreKey("k")
	line := skey + ":q"

	held, err := holder.Obtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	lockertest.WaitFor(t, "the holder's lock on all five nodes", func() bool {
		return holders(t, clients, skey, held.Token()) == 5
	})
	got := lockertest.ObtainAsync(ctx, waiter, "k")
	lockertest.WaitFor(t, "the waiter in line on every node", func() bool {
		for _, c := range clients {
			if c.LLen(ctx, line).Val() != 1 {
				return false
			}
		}
		return true
	})

	p.Hold(faultproxy.Upstream) // the release on the fifth node waits
	t.Cleanup(func() { p.Release(faultproxy.Upstream) })
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	o := <-got
	if o.Err != nil {
		t.Fatal(o.Err)
	}
	defer o.Lock.Release(ctx)
	if clients[4].Get(ctx, skey).Val() != held.Token() {
		t.Fatal("the held release reached the fifth node")
	}
	lockertest.WaitFor(t, "the winner out of the fifth node's line", func() bool {
		return clients[4].LLen(ctx, line).Val() == 0
	})
	if h := lockertest.MustInspect(t, ctx, waiter, "k"); h.Waiting != 0 {
		t.Fatalf("inspect: %+v, want nobody waiting", h)
	}
}
