package core

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// A refused attempt leaves the holder's lapse target in the entry, and a
// sweep that drops several lapsed keys of two Lockers at once fires each
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
	st.mu.Lock()
	entry := st.locks[kept.skey]
	st.mu.Unlock()
	if entry.lapse != kept.lapse {
		t.Fatal("a refused attempt replaced the holder's lapse target")
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
