package core

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/reqlock/reqlock/memorystore"
)

// A lock released in time leaves nothing of itself in the memory store.
func TestMemoryLapseReleasedLockIsNotKeptByStore(t *testing.T) {
	ctx := context.Background()
	st := memorystore.New()
	l := NewLocker(st, WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	lk, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := lk.Release(ctx); err != nil {
		t.Fatal(err)
	}
	p := weak.Make(lk)
	lk = nil
	if !collected(p) {
		t.Fatal("a released lock is still reachable")
	}
	runtime.KeepAlive(st)
}

// A lock whose lease ran out, and that its holder has released since (it
// was told ErrNotHeld), is gone: the store must not keep its lapse
// callback, and with it the Lock and its Locker, until the key is used
// again or a sweep comes, which for a key used once in a store of many
// held locks may be never.
func TestMemoryLapseCallbackNotKeptAfterExpiredLockReleased(t *testing.T) {
	ctx := context.Background()
	st := memorystore.New()
	l := NewLocker(st, WithTTL(30*time.Millisecond), WithoutWatchdog(),
		WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	lk, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	<-lk.Lost()                       // by the holder's own timer
	time.Sleep(60 * time.Millisecond) // and past the store's lease
	if err := lk.Release(ctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Release after the lease ran out: %v, want ErrNotHeld", err)
	}
	p := weak.Make(lk)
	lk = nil
	if !collected(p) {
		t.Fatal("the store keeps a lost and released lock alive through its lapse callback")
	}
	runtime.KeepAlive(st)
}
