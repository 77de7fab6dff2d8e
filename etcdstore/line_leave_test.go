package etcdstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/etcdstore"
)

// A waiter whose Leave failed (its store was out of reach for a moment) is
// a waiter that stopped without leaving, while its line key stands at the
// head on the store's line lease, which the store keeps alive for its other
// waiters of the same key. The store must still take it out of line, or
// they wait behind it for as long as they wait.
func TestFailedLeaveLeavesNoHeadBehind(t *testing.T) {
	st, _ := newStore(t)
	ctx := ctxFor(t, 30*time.Second)
	const key = "leave/{failed}"
	ttl := 5 * time.Second

	sub := st.Subscribe("leave/", "i1", func(string, string) {})
	done, err := sub.Hold(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer done()

	if _, err := st.Acquire(ctx, store.Lease{Key: key, Token: "holder", TTL: ttl}); err != nil {
		t.Fatalf("holder: %v", err)
	}
	for _, w := range []string{"i1/gone", "i1/next"} {
		if _, _, err := st.AcquireQueued(ctx, store.Lease{Key: key, Token: w + "-0", TTL: ttl}, w, false); !errors.Is(err, core.ErrNotObtained) {
			t.Fatalf("%s joins the line: %v", w, err)
		}
	}
	// The first waiter gives up, and its Leave does not reach etcd.
	dead, cancel := context.WithCancel(ctx)
	cancel()
	if err := st.Leave(dead, key, "i1/gone"); err == nil {
		t.Fatal("a Leave on a cancelled context reported success")
	}
	if err := st.Release(ctx, key, "holder"); err != nil {
		t.Fatalf("release: %v", err)
	}

	// The one left in line must get the lock within the line lease's
	// bound (LineTTL) and a margin, as when the first waiter's process dies.
	bound := 3 * etcdstore.LineTTL
	deadline := time.Now().Add(bound)
	for i := 1; ; i++ {
		_, _, err := st.AcquireQueued(ctx, store.Lease{Key: key, Token: "i1/next-" + string(rune('a'+i%26)) + time.Now().Format("150405.000000"), TTL: ttl}, "i1/next", false)
		if err == nil {
			return
		}
		if !errors.Is(err, core.ErrNotObtained) {
			t.Fatalf("attempt %d: %v", i, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the waiter behind one whose Leave failed is still refused after %v (%d attempts): the abandoned head keeps the key", bound, i)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
