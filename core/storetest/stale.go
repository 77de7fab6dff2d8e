package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

var stalePromises = []promise{
	{"release-after-expiry", staleReleaseAfterExpiry},
	{"extend-after-expiry", staleExtendAfterExpiry},
	{"wrong-token", staleWrongToken},
	{"double-release", staleDoubleRelease},
	{"locker", staleThroughLocker},
}

// takenOver has old's lease run out and a new holder take the key; it
// returns the new holder's lease.
func (f *fixture) takenOver(old store.Lease) store.Lease {
	f.t.Helper()
	time.Sleep(old.TTL)
	var next store.Lease
	f.waitFor("the lapsed lease to free the key", func() bool {
		next = f.lease(old.Key, f.h.long()) // a token serves one acquire
		_, err := f.s.Acquire(f.ctx, next)
		return err == nil
	})
	return next
}

// stillHolds checks that l's holder keeps its lock: TTL answers, and a
// fresh token cannot take the key.
func (f *fixture) stillHolds(l store.Lease, why string) {
	f.t.Helper()
	if left, err := f.s.TTL(f.ctx, l.Key, l.Token); err != nil || left <= 0 {
		f.t.Fatalf("%s: the holder's TTL is %v, %v; it must still hold the lock", why, left, err)
	}
	f.mustBeTaken(l.Key, why)
}

// A holder whose lease ran out and was taken over cannot release the new
// holder's lock.
func staleReleaseAfterExpiry(t *testing.T, h Harness) {
	f := open(t, h)
	old := f.lease(f.key(), h.short())
	f.acquire(old)
	next := f.takenOver(old)
	if err := f.s.Release(f.ctx, old.Key, old.Token); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("Release by the holder whose lease ran out: %v, want ErrNotHeld", err)
	}
	f.stillHolds(next, "after a stale Release")
	f.release(next)
}

// Nor extend it, nor read its lease.
func staleExtendAfterExpiry(t *testing.T, h Harness) {
	f := open(t, h)
	old := f.lease(f.key(), h.short())
	f.acquire(old)
	next := f.takenOver(old)
	before, err := f.s.TTL(f.ctx, next.Key, next.Token)
	if err != nil {
		t.Fatal(err)
	}
	r := f.s.Extend(f.ctx, []store.Lease{{Key: old.Key, Token: old.Token, TTL: 10 * h.long()}})
	if len(r) != 1 || !errors.Is(r[0].Err, core.ErrNotHeld) {
		t.Fatalf("Extend by the holder whose lease ran out: %+v, want one ErrNotHeld", r)
	}
	if _, err := f.s.TTL(f.ctx, old.Key, old.Token); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("TTL of the holder whose lease ran out: %v, want ErrNotHeld", err)
	}
	f.stillHolds(next, "after a stale Extend")
	if after, err := f.s.TTL(f.ctx, next.Key, next.Token); err != nil || after > before {
		t.Fatalf("the new holder's lease went from %v to %v (%v) on a stale Extend", before, after, err)
	}
	f.release(next)
}

// A token that never held the key can do nothing to its holder.
func staleWrongToken(t *testing.T, h Harness) {
	f := open(t, h)
	l := f.lease(f.key(), h.long())
	f.acquire(l)
	other := random()
	if err := f.s.Release(f.ctx, l.Key, other); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("Release with another token: %v, want ErrNotHeld", err)
	}
	if r := f.s.Extend(f.ctx, []store.Lease{{Key: l.Key, Token: other, TTL: h.long()}}); len(r) != 1 || !errors.Is(r[0].Err, core.ErrNotHeld) {
		t.Fatalf("Extend with another token: %+v, want one ErrNotHeld", r)
	}
	if _, err := f.s.TTL(f.ctx, l.Key, other); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("TTL with another token: %v, want ErrNotHeld", err)
	}
	// The token of the key's holder, on another key.
	if err := f.s.Release(f.ctx, f.key(), l.Token); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("Release of a free key: %v, want ErrNotHeld", err)
	}
	f.stillHolds(l, "after calls with another token")
	f.release(l)
}

// A release is done once: the second is ErrNotHeld, and frees nothing of
// the next holder's.
func staleDoubleRelease(t *testing.T, h Harness) {
	f := open(t, h)
	l := f.lease(f.key(), h.long())
	f.acquire(l)
	f.release(l)
	if _, err := f.s.TTL(f.ctx, l.Key, l.Token); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("TTL after Release: %v, want ErrNotHeld", err)
	}
	next := f.lease(l.Key, h.long())
	f.acquire(next)
	if err := f.s.Release(f.ctx, l.Key, l.Token); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("second Release: %v, want ErrNotHeld", err)
	}
	f.stillHolds(next, "after a second Release by the holder before")
	f.release(next)
}

// Through a Locker: a Lock whose lease ran out (no watchdog) cannot
// release or refresh the next holder's lock.
func staleThroughLocker(t *testing.T, h Harness) {
	f := open(t, h)
	key := random()
	old, err := f.locker(core.WithTTL(h.short()), core.WithoutWatchdog()).TryObtain(f.ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	<-old.Lost() // the lease ran out by the holder's clock
	current, err := f.locker(core.WithTTL(h.long())).Obtain(f.ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = current.Release(f.ctx) }()
	if err := old.Release(f.ctx); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("stale Lock.Release: %v, want ErrNotHeld", err)
	}
	if err := old.Refresh(f.ctx, h.long()); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("stale Lock.Refresh: %v, want ErrNotHeld", err)
	}
	if _, err := current.TTL(f.ctx); err != nil {
		t.Fatalf("the current holder lost its lock: %v", err)
	}
	if _, err := f.locker().TryObtain(f.ctx, key); !errors.Is(err, core.ErrNotObtained) {
		t.Fatalf("the key is free after a stale release: %v", err)
	}
}
