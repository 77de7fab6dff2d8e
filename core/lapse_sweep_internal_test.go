package core

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/memorystore"
)

// A sweep that drops the entries of two lapsed keys marks both holders
// lost before it lets go of the store's mutex, and only then finishes each
// loss (watchdog, telemetry, log). While the first loss's telemetry is held
// up (slow, as in TestMemoryLapseKeyTakenBeforeLapseRegistered), a third
// caller takes the other swept key: its last holder's Lost must already
// be closed. The store's promise is that a lapsed holder is told before
// another caller gets the lock.
func TestMemoryLapseSweptKeyNotFreeBeforeHolderIsTold(t *testing.T) {
	ctx := context.Background()
	st := memorystore.New()

	var mu sync.Mutex
	ends := 0
	telling := make(chan struct{}) // the sweeping acquire sits in the first loss's telemetry
	letGo := make(chan struct{})
	gate := heldGate{onAdd: func(v int64) {
		if v > 0 {
			return
		}
		mu.Lock()
		ends++
		first := ends == 1
		mu.Unlock()
		if first {
			close(telling)
			<-letGo
		}
	}}
	holder := NewLocker(st, WithTTL(30*time.Millisecond), WithoutWatchdog(), quietLogger(),
		WithTelemetry(Telemetry{MeterProvider: heldGateProvider{meter: heldGateMeter{held: gate}}}))
	other := NewLocker(st, quietLogger())

	// Fillers bring the map one short of its sweep size with the two
	// lapsing keys in it.
	for i := range minSweep - 3 {
		if _, err := st.Acquire(ctx, store.Lease{Key: fmt.Sprintf("filler-%d", i), Token: "t", TTL: time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
	locks := map[string]*Lock{}
	for _, k := range []string{"a", "b"} {
		lk, err := holder.TryObtain(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		holder.dog.mu.Lock()
		lk.validUntil = time.Now().Add(time.Hour) // the holder's timer will not say it
		holder.dog.mu.Unlock()
		locks[k] = lk
	}
	release := sync.OnceFunc(func() { close(letGo) })
	defer func() {
		release()
		for _, lk := range locks {
			_ = lk.Release(ctx)
		}
	}()
	time.Sleep(60 * time.Millisecond) // past both leases in the store

	// A new key brings the map to its sweep size: the sweep drops "a" and
	// "b" and tells their holder, one at a time.
	sweeping := tryAsync(other, "c")
	<-telling
	later := "b" // the key whose holder has not been told yet
	select {
	case <-locks["b"].Lost():
		later = "a"
	default:
	}
	third, err := other.TryObtain(ctx, later)
	if err != nil {
		t.Fatalf("the swept key %q was not free: %v", later, err)
	}
	held := true
	select {
	case <-locks[later].Lost():
		held = false
	default:
	}
	release()
	_ = third.Release(ctx)
	if r := <-sweeping; r.err == nil {
		_ = r.lk.Release(ctx)
	}
	if held {
		t.Errorf("another caller holds %q and its lapsed holder's Lost has not fired", later)
	}
}

// A sweep that drops several lapsed keys of two Lockers at once fires each
// holder's Lost, and only theirs.
func TestMemoryLapseSweepFiresEachLapsedHolderOfTwoLockers(t *testing.T) {
	ctx := context.Background()
	st := memorystore.New()
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
		l := store.Lease{Key: fmt.Sprintf("filler-%d", i), Token: "t", TTL: time.Minute}
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
