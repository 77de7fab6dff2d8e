package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

var leasePromises = []promise{
	{"validity", leaseValidity},
	{"taken-says-remaining", leaseTakenSaysRemaining},
	{"expiry", leaseExpiry},
	{"extend", leaseExtend},
	{"extend-batch", leaseExtendBatch},
}

// A grant and a renewal are valid for no longer than the lease asked for
// less store.Drift, counted from the call: the holder's clock must declare
// the lock lost before the store frees it, though the holder's timer fires
// a little late and the store's clock runs a little fast.
func leaseValidity(t *testing.T, h Harness) {
	f := open(t, h)
	for _, ttl := range []time.Duration{h.short(), h.long()} {
		most := ttl - store.Drift(ttl)
		l := f.lease(f.key(), ttl)
		g := f.acquire(l)
		if g.Validity <= 0 || g.Validity > most {
			t.Fatalf("Grant.Validity %v for a lease of %v, want within (0, %v]: the lease less store.Drift", g.Validity, ttl, most)
		}
		if g.Fence == 0 {
			t.Fatalf("Grant.Fence is 0: fences start above 0")
		}
		r := f.s.Extend(f.ctx, []store.Lease{l})
		if len(r) != 1 || r[0].Err != nil {
			t.Fatalf("Extend by the holder: %+v", r)
		}
		if r[0].Validity <= 0 || r[0].Validity > most {
			t.Fatalf("Renewal.Validity %v for a lease of %v, want within (0, %v]: the lease less store.Drift", r[0].Validity, ttl, most)
		}
		left, err := f.s.TTL(f.ctx, l.Key, l.Token)
		if err != nil || left <= 0 || left > ttl {
			t.Fatalf("TTL %v, %v for a lease of %v, want within (0, %v]", left, err, ttl, ttl)
		}
		f.release(l)
	}
}

// An Acquire of a held key is a *NotObtainedError that says how long the
// holder's lease still runs, never longer than the lease.
func leaseTakenSaysRemaining(t *testing.T, h Harness) {
	f := open(t, h)
	ttl := h.long()
	l := f.lease(f.key(), ttl)
	f.acquire(l)
	_, err := f.s.Acquire(f.ctx, f.lease(l.Key, ttl))
	var no *store.NotObtainedError
	if !errors.As(err, &no) || !errors.Is(err, core.ErrNotObtained) {
		t.Fatalf("Acquire of a held key: %v, want a *NotObtainedError", err)
	}
	if no.Remaining < 0 || no.Remaining > ttl {
		t.Fatalf("NotObtainedError.Remaining %v for a lease of %v, want within [0, %v]", no.Remaining, ttl, ttl)
	}
	f.release(l)
}

// A lease not renewed runs out: the key is free after it, never before
// the holder's validity ends.
func leaseExpiry(t *testing.T, h Harness) {
	f := open(t, h)
	l := f.lease(f.key(), h.short())
	start := time.Now()
	g := f.acquire(l)
	f.mustBeTaken(l.Key, "right after the grant")
	freed := f.awaitFree(l.Key, "the lease to run out")
	if early := start.Add(g.Validity).Sub(freed); early > 0 {
		t.Fatalf("the key was free %v before the holder's validity (%v from the call) ended", early, g.Validity)
	}
	if _, err := f.s.TTL(f.ctx, l.Key, l.Token); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("TTL after the lease ran out: %v, want ErrNotHeld", err)
	}
}

// Extend renews the lease: a short lease extended to a long one outlives
// the short one.
func leaseExtend(t *testing.T, h Harness) {
	f := open(t, h)
	l := f.lease(f.key(), h.short())
	f.acquire(l)
	long := store.Lease{Key: l.Key, Token: l.Token, TTL: h.long()}
	if r := f.s.Extend(f.ctx, []store.Lease{long}); len(r) != 1 || r[0].Err != nil {
		t.Fatalf("Extend by the holder: %+v", r)
	}
	time.Sleep(h.short() + h.short()/2)
	f.stillHolds(l, "past the first lease, after an Extend to a longer one")
	f.release(l)
}

// Extend answers each lease of a batch, in order.
func leaseExtendBatch(t *testing.T, h Harness) {
	f := open(t, h)
	a, b := f.lease(f.key(), h.long()), f.lease(f.key(), h.long())
	f.acquire(a)
	f.acquire(b)
	notHeld := f.lease(f.key(), h.long())
	stale := store.Lease{Key: a.Key, Token: random(), TTL: h.long()}
	r := f.s.Extend(f.ctx, []store.Lease{a, notHeld, b, stale})
	if len(r) != 4 {
		t.Fatalf("Extend of 4 leases answered %d", len(r))
	}
	want := []error{nil, core.ErrNotHeld, nil, core.ErrNotHeld}
	for i, w := range want {
		if w == nil && r[i].Err != nil || w != nil && !errors.Is(r[i].Err, w) {
			t.Fatalf("Extend's answer %d: %v, want %v (all: %+v)", i, r[i].Err, w, r)
		}
	}
	f.release(a)
	f.release(b)
}
