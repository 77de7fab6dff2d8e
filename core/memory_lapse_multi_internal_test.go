package core

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// A sweep that drops several lapsed keys of two Lockers at once fires each
// holder's Lost, and only theirs.
func TestMemoryLapseSweepFiresEachLapsedHolderOfTwoLockers(t *testing.T) {
	ctx := context.Background()
	st := NewMemoryStore()
	a := NewLocker(st, WithTTL(30*time.Millisecond), WithoutWatchdog(), quietLogger())
	b := NewLocker(st, WithTTL(30*time.Millisecond), WithoutWatchdog(), quietLogger())
	live := NewLocker(st, quietLogger())
	var lapsing []*Lock
	for i := range 3 {
		for _, l := range []*Locker{a, b} {
			lk, err := l.TryObtain(ctx, fmt.Sprintf("k%d-%p", i, l))
			if err != nil {
				t.Fatal(err)
			}
			l.dog.mu.Lock()
			lk.validUntil = time.Now().Add(time.Hour) // the holder's timer will not say it
			l.dog.mu.Unlock()
			lapsing = append(lapsing, lk)
		}
	}
	defer func() {
		for _, lk := range lapsing {
			_ = lk.Release(ctx)
		}
	}()
	kept, err := live.TryObtain(ctx, "kept")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = kept.Release(ctx) }()
	if _, err := b.TryObtain(ctx, "kept"); err == nil {
		t.Fatal("a held key was taken")
	}
	time.Sleep(60 * time.Millisecond) // past the lapsing leases

	for i := range minSweep {
		l := Lease{Key: fmt.Sprintf("filler-%d", i), Token: "t", TTL: time.Minute}
		if _, err := st.Acquire(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	for i, lk := range lapsing {
		select {
		case <-lk.Lost():
		default:
			t.Errorf("lapsed lock %d: the sweep dropped its entry and its Lost has not fired", i)
		}
	}
	select {
	case <-kept.Lost():
		t.Error("a lock still held lost in the sweep")
	default:
	}
}

// A refused attempt leaves the holder's lapse notice with the key: when the
// holder's lease has run out and another caller takes the key, the holder
// is told, although an attempt of a third Locker came in between.
func TestMemoryLapseRefusedAttemptKeepsHoldersNotice(t *testing.T) {
	ctx := context.Background()
	st := NewMemoryStore()
	_, lk := lapsingHolder(t, st, 30*time.Millisecond)
	refused := NewLocker(st, quietLogger())
	if _, err := refused.TryObtain(ctx, "k"); err == nil {
		t.Fatal("a held key was taken")
	}
	time.Sleep(60 * time.Millisecond) // past the holder's lease
	next, err := NewLocker(st, quietLogger()).TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = next.Release(ctx) }()
	select {
	case <-lk.Lost():
	default:
		t.Fatal("the key was taken from a lapsed holder that a refused attempt left untold")
	}
}
