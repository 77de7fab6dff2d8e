package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
)

// A holder whose lease runs out inside a transaction it guarded keeps the
// key until the transaction ends; Inspect says so: held, by whom, expired,
// no lease left. Before a takeover was tried (one locker on the row) and
// after (the refused takeover locked the row too). Once the transaction
// ends the key reads free again.
func TestInspectGuardedPastLease(t *testing.T) {
	s, pool := open(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const ttl = 300 * time.Millisecond
	holder := core.NewLocker(s, core.WithTTL(ttl), core.WithoutWatchdog(), core.WithHolder("web-1"))
	lk, err := holder.TryObtain(ctx, "acct")
	if err != nil {
		t.Fatal(err)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if err := s.Guard(ctx, tx, lk); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * ttl)

	other := core.NewLocker(s, core.WithTTL(10*time.Second), core.WithHolder("web-2"))
	for _, when := range []string{"before a takeover", "after a refused takeover"} {
		h, err := other.Inspect(ctx, "acct")
		if err != nil {
			t.Fatal(err)
		}
		if !h.Held || !h.Expired || h.Holder != "web-1" || h.Lease != 0 || h.Fence != lk.Fence() {
			t.Fatalf("%s: %+v; want held by web-1, expired, no lease, fence %d", when, h, lk.Fence())
		}
		l2, err := other.TryObtain(ctx, "acct")
		if err == nil {
			_ = l2.Release(ctx)
			t.Fatalf("%s: took a key its guarded holder keeps", when)
		}
		if !errors.Is(err, core.ErrNotObtained) {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	h, err := other.Inspect(ctx, "acct")
	if err != nil {
		t.Fatal(err)
	}
	if h.Held || h.Expired || h.Holder != "" {
		t.Fatalf("after the transaction ended: %+v; want free", h)
	}
	l2, err := other.TryObtain(ctx, "acct")
	if err != nil {
		t.Fatalf("the key stays taken after the guarded transaction ended: %v", err)
	}
	_ = l2.Release(ctx)

	// A lease that ran out with no transaction open is free, as before.
	lk3, err := holder.TryObtain(ctx, "plain")
	if err != nil {
		t.Fatal(err)
	}
	_ = lk3
	time.Sleep(2 * ttl)
	if h, err := other.Inspect(ctx, "plain"); err != nil || h.Held || h.Expired {
		t.Fatalf("a lapsed lease, no transaction: %+v, %v; want free", h, err)
	}
}
