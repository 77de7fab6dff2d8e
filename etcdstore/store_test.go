package etcdstore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

func TestObtainReleaseFenceGrows(t *testing.T) {
	s, _ := newStore(t)
	l := core.NewLocker(s, core.WithTTL(2*time.Second))
	ctx := ctxFor(t, 20*time.Second)
	a := mustObtain(t, l, "order-1")
	_, err := l.TryObtain(ctx, "order-1")
	if !errors.Is(err, core.ErrNotObtained) {
		t.Fatalf("second TryObtain: %v, want ErrNotObtained", err)
	}
	if left, ok := core.HolderTTL(err); !ok || left <= 0 || left > 2*time.Second {
		t.Fatalf("holder's TTL in the error = %v %v, want (0, 2s]", left, ok)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	b := mustObtain(t, l, "order-1")
	defer b.Release(ctx)
	if b.Fence() <= a.Fence() {
		t.Fatalf("fence %d after %d: not increasing", b.Fence(), a.Fence())
	}
}

func TestReleaseChecksToken(t *testing.T) {
	s, _ := newStore(t)
	ctx := ctxFor(t, 10*time.Second)
	l := store.Lease{Key: "t:{k}", Token: "tok-a", TTL: 2 * time.Second}
	g, err := s.Acquire(ctx, l)
	if err != nil || g.Fence == 0 || g.Validity <= 0 || g.Validity > 2*time.Second {
		t.Fatalf("acquire: %+v %v", g, err)
	}
	if err := s.Release(ctx, l.Key, "tok-b"); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("release with another token: %v, want ErrNotHeld", err)
	}
	if _, err := s.TTL(ctx, l.Key, "tok-b"); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("TTL with another token: %v, want ErrNotHeld", err)
	}
	if left, err := s.TTL(ctx, l.Key, "tok-a"); err != nil || left <= 0 {
		t.Fatalf("TTL: %v %v", left, err)
	}
	if err := s.Release(ctx, l.Key, "tok-a"); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, l.Key, "tok-a"); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("second release: %v, want ErrNotHeld", err)
	}
}
