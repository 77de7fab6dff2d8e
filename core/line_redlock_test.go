package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
)

// On Redlock, a wait that gives up while one holder keeps the lock (the
// watchdog renews it) leaves the line on every node: the line holds the
// waiters alive, not every wait ever made.
func TestRedlockLineEmptiesWhenWaitersGiveUp(t *testing.T) {
	_, clients := startRedlock(t, 3)
	s := core.NewRedlockStore(clients...)
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
