package core

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"
)

// A sweep of the memory store, set off by other keys' acquires, drops the
// entry of a key whose lease ran out: its holder must still hear that the
// key is gone before the next caller holds it, however late its timer.
func TestMemoryLapseSurvivesSweepOfExpiredEntry(t *testing.T) {
	ctx := context.Background()
	st := NewMemoryStore()
	quiet := WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	holder := NewLocker(st, WithTTL(30*time.Millisecond), WithoutWatchdog(), quiet)
	other := NewLocker(st, quiet)
	lk, err := holder.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	// Released last, so that the holder's watchdog stops watching it.
	defer func() { _ = lk.Release(ctx) }()
	holder.dog.mu.Lock()
	lk.validUntil = time.Now().Add(time.Hour) // the holder's timer will not say it
	holder.dog.mu.Unlock()
	time.Sleep(60 * time.Millisecond) // past the store's lease

	// Other keys fill the store to its sweep size; the sweep drops "k".
	for i := range minSweep {
		l := Lease{Key: fmt.Sprintf("filler-%d", i), Token: "t", TTL: time.Minute}
		if _, err := st.Acquire(ctx, l); err != nil {
			t.Fatal(err)
		}
	}

	next, err := other.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = next.Release(ctx) }()
	select {
	case <-lk.Lost():
	default:
		t.Fatal("another caller holds the key and its last holder's Lost has not fired: the sweep dropped it")
	}
}
