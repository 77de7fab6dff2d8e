package core

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"
)

// On the memory store a holder's Lost fires before another caller holds
// the key its lease ran out on, even when the holder's own timer is late:
// here it is pushed an hour out, as a stalled process would have it.
func TestMemoryLapseFiresLostBeforeTheNextHolder(t *testing.T) {
	ctx := context.Background()
	st := NewMemoryStore()
	quiet := WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	holder := NewLocker(st, WithTTL(30*time.Millisecond), WithoutWatchdog(), quiet)
	other := NewLocker(st, quiet)
	lk, err := holder.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	holder.dog.mu.Lock()
	lk.validUntil = time.Now().Add(time.Hour) // the holder's timer will not say it
	holder.dog.mu.Unlock()
	time.Sleep(60 * time.Millisecond) // past the store's lease

	next, err := other.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = next.Release(ctx) }()
	select {
	case <-lk.Lost():
	default:
		t.Fatal("another caller holds the key and its last holder's Lost has not fired")
	}
	if err := lk.Release(ctx); err == nil {
		t.Fatal("the lapsed holder released the next holder's lock")
	}
}
