package etcdstore_test

import (
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
)

func TestInspectReadsOnly(t *testing.T) {
	s, cli := newStore(t)
	l := core.NewLocker(s, core.WithTTL(3*time.Second), core.WithHolder("web-1"))
	ctx := ctxFor(t, 10*time.Second)
	h, err := l.Inspect(ctx, "k")
	if err != nil || h.Held || h.StoreKey == "" {
		t.Fatalf("free: %+v %v", h, err)
	}
	lk := mustObtain(t, l, "k")
	defer lk.Release(ctx)
	before, _ := cli.Get(ctx, "any")
	h, err = l.Inspect(ctx, "k")
	if err != nil || !h.Held || h.Fence != lk.Fence() || h.Holder != "web-1" || h.Lease <= 0 || h.Lease > 3*time.Second {
		t.Fatalf("held: %+v %v", h, err)
	}
	after, _ := cli.Get(ctx, "any")
	if after.Header.Revision != before.Header.Revision {
		t.Fatalf("inspect wrote: revision %d → %d", before.Header.Revision, after.Header.Revision)
	}
}
