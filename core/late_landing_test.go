package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// These tests delay real bytes between a real client and a real Redis: a
// command whose caller gave up may still land, after later commands
// succeeded, and no trust may rest on it not landing.

// A Refresh to 1s times out while its command is held; a Refresh to 10s
// succeeds; then the first lands. Redis must keep the 10s lease the holder
// trusts: an extend never shortens it.
func TestDelayedRefreshDoesNotCutLongerLease(t *testing.T) {
	px := redistest.StartProxied(t)
	l := newLocker(redisstore.New(px.Via), core.WithTTL(30*time.Second))
	ctx := ctxT(t, 20*time.Second)
	lk, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release(ctx)

	land := px.HoldNext(t)
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := lk.Refresh(short, time.Second); !errors.Is(err, core.ErrUnavailable) {
		t.Fatalf("held Refresh: %v, want ErrUnavailable", err)
	}
	if err := lk.Refresh(ctx, 10*time.Second); err != nil {
		t.Fatalf("Refresh(10s): %v", err)
	}
	land()
	redistest.Settle(t, px.Direct)

	skey, _ := l.StoreKey("k")
	if left := px.Direct.PTTL(ctx, skey).Val(); left < 9*time.Second {
		t.Fatalf("Redis keeps the lock %v after a late Refresh(1s) landed; the holder trusts 10s", left)
	}
}

// The same at the store, for a renewal the watchdog sent: Extend with a
// short lease lands after Extend with a long one.
func TestDelayedExtendDoesNotCutLongerLease(t *testing.T) {
	px := redistest.StartProxied(t)
	st := redisstore.New(px.Via)
	ctx := ctxT(t, 20*time.Second)
	key := "reqlock:{extend-late}"
	if _, err := st.Acquire(ctx, store.Lease{Key: key, Token: "me", TTL: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	land := px.HoldNext(t)
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if r := st.Extend(short, []store.Lease{{Key: key, Token: "me", TTL: time.Second}})[0]; r.Err == nil {
		t.Fatal("held Extend succeeded")
	}
	if r := st.Extend(ctx, []store.Lease{{Key: key, Token: "me", TTL: 10 * time.Second}})[0]; r.Err != nil {
		t.Fatalf("Extend(10s): %v", r.Err)
	}
	land()
	redistest.Settle(t, px.Direct)
	if left := px.Direct.PTTL(ctx, key).Val(); left < 9*time.Second {
		t.Fatalf("Redis keeps the lock %v after a late Extend(1s) landed; Extend(10s) succeeded", left)
	}
}
