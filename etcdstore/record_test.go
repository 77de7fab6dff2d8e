package etcdstore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

func TestRecordReplacesLockUntilRetentionEnds(t *testing.T) {
	s, _ := newStore(t)
	l := core.NewLocker(s, core.WithTTL(2*time.Second))
	ctx := ctxFor(t, 20*time.Second)
	lk, rec, err := l.TryObtainOrRecord(ctx, "pay-1")
	if err != nil || rec != nil || lk == nil {
		t.Fatalf("first: %v %q %v", lk, rec, err)
	}
	if err := lk.ReleaseRecording(ctx, []byte("200 ok"), time.Second); err != nil {
		t.Fatal(err)
	}
	lk2, rec, err := l.TryObtainOrRecord(ctx, "pay-1")
	if err != nil || lk2 != nil || string(rec) != "200 ok" {
		t.Fatalf("replay: %v %q %v", lk2, rec, err)
	}
	// Retention 1s lives at most 2s (a tenth longer, at least a second).
	eventually(t, 5*time.Second, "record gone after its retention", func() bool {
		lk, rec, err := l.TryObtainOrRecord(ctx, "pay-1")
		if lk != nil {
			_ = lk.Release(ctx)
		}
		return err == nil && rec == nil
	})
}

func TestEmptyRecordIsARecord(t *testing.T) {
	s, _ := newStore(t)
	ctx := ctxFor(t, 10*time.Second)
	l := store.Lease{Key: "t:{e}", Token: "tok", TTL: 2 * time.Second}
	if _, err := s.Acquire(ctx, l); err != nil {
		t.Fatal(err)
	}
	if err := s.ReleaseRecording(ctx, l.Key, l.Token, nil, time.Minute); err != nil {
		t.Fatal(err)
	}
	g, rec, err := s.AcquireOrRecord(ctx, store.Lease{Key: l.Key, Token: "tok2", TTL: 2 * time.Second})
	if err != nil || rec == nil || len(rec) != 0 || g.Fence != 0 {
		t.Fatalf("empty record: %+v %#v %v", g, rec, err)
	}
}

func TestReleaseRecordingChecksToken(t *testing.T) {
	s, _ := newStore(t)
	ctx := ctxFor(t, 10*time.Second)
	l := store.Lease{Key: "t:{r}", Token: "tok", TTL: 2 * time.Second}
	if _, err := s.Acquire(ctx, l); err != nil {
		t.Fatal(err)
	}
	if err := s.ReleaseRecording(ctx, l.Key, "other", []byte("x"), time.Minute); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("record with another token: %v", err)
	}
	_, rec, err := s.AcquireOrRecord(ctx, store.Lease{Key: l.Key, Token: "tok2", TTL: 2 * time.Second})
	if rec != nil || !errors.Is(err, core.ErrNotObtained) {
		t.Fatalf("after a refused record: %q %v", rec, err)
	}
}

// Waiters in line get the record when the holder writes it.
func TestWaitersGetTheRecord(t *testing.T) {
	s, _ := newStore(t)
	l := core.NewLocker(s, core.WithTTL(2*time.Second))
	other := core.NewLocker(s, core.WithTTL(2*time.Second))
	ctx := ctxFor(t, 20*time.Second)
	lk := mustObtain(t, l, "job")
	got := make(chan string, 1)
	go func() {
		lk, rec, err := other.ObtainOrRecord(ctx, "job")
		if lk != nil {
			_ = lk.Release(ctx)
		}
		if err != nil {
			got <- err.Error()
			return
		}
		got <- string(rec)
	}()
	eventually(t, 10*time.Second, "waiter in line", func() bool {
		h, _ := l.Inspect(ctx, "job")
		return h.Waiting == 1
	})
	if err := lk.ReleaseRecording(ctx, []byte("done"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r != "done" {
		t.Fatalf("waiter got %q, want the record", r)
	}
}
