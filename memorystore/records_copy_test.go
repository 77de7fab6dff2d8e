package memorystore_test

import (
	"context"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/memorystore"
)

// A record is what the first run wrote, for every caller that finds it:
// one caller changing the bytes it was handed must not change what the
// next caller is handed. The store copies a record on its way in; on its
// way out it hands every caller the one slice it keeps. (A Redis store
// decodes a fresh slice for every reply.)
func TestRecordHandedOutIsACopy(t *testing.T) {
	ctx := context.Background()
	s := memorystore.New()
	l := store.Lease{Key: "reqlock:{alias}", Token: "t1", TTL: time.Minute}
	if _, err := s.Acquire(ctx, l); err != nil {
		t.Fatal(err)
	}
	if err := s.ReleaseRecording(ctx, l.Key, l.Token, []byte("paid"), time.Minute); err != nil {
		t.Fatal(err)
	}
	_, first, err := s.AcquireOrRecord(ctx, store.Lease{Key: l.Key, Token: "t2", TTL: time.Minute})
	if err != nil || string(first) != "paid" {
		t.Fatalf("first reader: %q, %v", first, err)
	}
	first[0] = 'X' // the first reader reuses its buffer
	_, second, err := s.AcquireOrRecord(ctx, store.Lease{Key: l.Key, Token: "t3", TTL: time.Minute})
	if err != nil || string(second) != "paid" {
		t.Fatalf("second reader got %q (%v) after the first changed its copy; the record is %q", second, err, "paid")
	}
}

// The same through Locker.Once: a replayed Value that its caller changes
// changes the next caller's replay.
func TestOnceReplayedValueIsACopy(t *testing.T) {
	ctx := context.Background()
	l := core.NewLocker(memorystore.New())
	run := func(context.Context) ([]byte, error) { return []byte("order-42"), nil }
	if _, err := l.Once(ctx, "charge", time.Minute, run); err != nil {
		t.Fatal(err)
	}
	a, err := l.Once(ctx, "charge", time.Minute, run)
	if err != nil || !a.Replayed || string(a.Value) != "order-42" {
		t.Fatalf("first replay: %+v, %v", a, err)
	}
	copy(a.Value, "XXXXX")
	b, err := l.Once(ctx, "charge", time.Minute, run)
	if err != nil || string(b.Value) != "order-42" {
		t.Fatalf("second replay: %q (%v) after the first caller changed its Value; want %q", b.Value, err, "order-42")
	}
}
