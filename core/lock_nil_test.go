package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// The nil *Lock a refused TryObtain returns holds nothing: every method
// says so, none panics.
func TestNilLockHoldsNothing(t *testing.T) {
	ctx := context.Background()
	s := memorystore.New()
	held, err := newLocker(s).TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(ctx)
	lk, err := newLocker(s).TryObtain(ctx, "k")
	if lk != nil || !errors.Is(err, core.ErrNotObtained) {
		t.Fatalf("TryObtain of a held key: %v, %v", lk, err)
	}

	if err := lk.Release(ctx); !errors.Is(err, core.ErrNotHeld) {
		t.Errorf("Release: %v, want ErrNotHeld", err)
	}
	if err := lk.ReleaseRecording(ctx, []byte("done"), time.Minute); !errors.Is(err, core.ErrNotHeld) {
		t.Errorf("ReleaseRecording: %v, want ErrNotHeld", err)
	}
	if err := lk.ReleaseDetached(ctx); !errors.Is(err, core.ErrNotHeld) {
		t.Errorf("ReleaseDetached: %v, want ErrNotHeld", err)
	}
	if err := lk.Refresh(ctx, time.Second); !errors.Is(err, core.ErrNotHeld) {
		t.Errorf("Refresh: %v, want ErrNotHeld", err)
	}
	if d, err := lk.TTL(ctx); d != 0 || !errors.Is(err, core.ErrNotHeld) {
		t.Errorf("TTL: %v, %v, want 0, ErrNotHeld", d, err)
	}
	select {
	case <-lk.Lost():
	default:
		t.Error("Lost is not closed")
	}
	wctx, cancel := lk.WithContext(ctx)
	defer cancel()
	if wctx.Err() == nil || !errors.Is(context.Cause(wctx), core.ErrNotHeld) {
		t.Errorf("WithContext: err %v, cause %v, want cancelled with cause ErrNotHeld", wctx.Err(), context.Cause(wctx))
	}
	if _, ok := core.FromContext(wctx); ok {
		t.Error("WithContext's context carries a lock")
	}
	if lk.Key() != "" || lk.StoreKey() != "" || lk.Token() != "" || lk.Fence() != 0 {
		t.Errorf("Key %q StoreKey %q Token %q Fence %d, want empty", lk.Key(), lk.StoreKey(), lk.Token(), lk.Fence())
	}
	// The key's holder is untouched.
	if _, err := held.TTL(ctx); err != nil {
		t.Errorf("the holder's lock: %v", err)
	}
}
