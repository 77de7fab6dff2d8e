package storetest

import (
	"strings"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

var inspectPromises = []promise{
	{"free", inspectFree},
	{"held", inspectHeld},
	{"read-only", inspectReadOnly},
	{"waiting", inspectWaiting},
	{"handed-off", inspectHandedOff},
	{"locker", inspectThroughLocker},
}

const inspectMeaning = "operators cannot ask it who holds a key"

func (f *fixture) inspector() store.Inspector {
	f.t.Helper()
	return as[store.Inspector](f, "store.Inspector", inspectMeaning)
}

func (f *fixture) inspect(in store.Inspector, key string) core.Holding {
	f.t.Helper()
	hd, err := in.Inspect(f.ctx, key)
	if err != nil {
		f.t.Fatalf("Inspect(%s): %v", key, err)
	}
	return hd
}

// A key never used is held by nobody, with nothing in line and no fence.
func inspectFree(t *testing.T, h Harness) {
	f := open(t, h)
	in := f.inspector()
	if hd := f.inspect(in, f.key()); hd != (core.Holding{}) {
		t.Fatalf("a key never used: %+v, want the zero Holding", hd)
	}
}

// A held key: its holder's label (never its token), fence and lease.
func inspectHeld(t *testing.T, h Harness) {
	f := open(t, h)
	in := f.inspector()
	secret := random()
	l := store.Lease{Key: f.key(), Token: secret + ".pod-a", TTL: h.long()}
	g := f.acquire(l)
	hd := f.inspect(in, l.Key)
	if !hd.Held || hd.HandedOff || hd.Holder != "pod-a" || hd.Fence != g.Fence ||
		hd.Lease <= 0 || hd.Lease > l.TTL || hd.Waiting != 0 || hd.StoreKey != "" {
		t.Fatalf("a held key: %+v; want held by pod-a with fence %d, a lease within (0, %v], nobody waiting, StoreKey left empty",
			hd, g.Fence, l.TTL)
	}
	if strings.Contains(hd.Holder, secret) {
		t.Fatalf("Inspect gave out the holder's token: %+v", hd)
	}
	bare := f.lease(f.key(), h.long())
	f.acquire(bare)
	if hd := f.inspect(in, bare.Key); !hd.Held || hd.Holder != "" {
		t.Fatalf("a key held under a token without a label: %+v, want held, Holder empty", hd)
	}
	f.release(l)
	f.release(bare)
	if hd := f.inspect(in, l.Key); hd.Held || hd.Lease != 0 || hd.Holder != "" || hd.Waiting != 0 {
		t.Fatalf("a released key: %+v, want free", hd)
	}
}

// Inspect changes nothing: a key inspected stays free, a held lease does
// not grow, the line stays as it was; and, when the harness can count
// them, the backend takes no writes.
func inspectReadOnly(t *testing.T, h Harness) {
	f := open(t, h)
	in := f.inspector()
	writes := func() int64 { return 0 }
	if h.Writes != nil {
		writes = func() int64 { return h.Writes(t, f.s) }
	}
	free, held := f.key(), f.lease(f.key(), h.long())
	f.acquire(held)
	before, err := f.s.TTL(f.ctx, held.Key, held.Token)
	if err != nil {
		t.Fatal(err)
	}
	first := f.inspect(in, held.Key)
	w := writes()
	for range 20 {
		f.inspect(in, free)
		f.inspect(in, held.Key)
	}
	if got := writes(); got != w {
		t.Fatalf("20 inspections of a free and a held key made %d writes", got-w)
	}
	last := f.inspect(in, held.Key)
	if last.Lease > first.Lease || last.Fence != first.Fence || last.Holder != first.Holder {
		t.Fatalf("inspection moved the lock: first %+v, last %+v", first, last)
	}
	if after, err := f.s.TTL(f.ctx, held.Key, held.Token); err != nil || after > before {
		t.Fatalf("the holder's lease went from %v to %v (%v) while inspected", before, after, err)
	}
	if hd := f.inspect(in, free); hd.Held {
		t.Fatalf("a free key inspected 20 times: %+v", hd)
	}
	f.mustBeFree(free, "a free key inspected 20 times")
	f.release(held)
}

// Waiting counts the waiters in a key's line.
func inspectWaiting(t *testing.T, h Harness) {
	f := open(t, h)
	in := f.inspector()
	w := as[store.Waker](f, "store.Waker", linesMeaning)
	holder := f.lease(f.key(), h.long())
	f.acquire(holder)
	instance := random()
	a, b := waiterIn(instance), waiterIn(random())
	f.queue(w, f.waitLease(holder.Key, a), a)
	if hd := f.inspect(in, holder.Key); hd.Waiting != 1 {
		t.Fatalf("one waiter in line: %+v", hd)
	}
	f.queue(w, f.waitLease(holder.Key, b), b)
	if hd := f.inspect(in, holder.Key); hd.Waiting != 2 {
		t.Fatalf("two waiters in line: %+v", hd)
	}
	if err := w.Leave(f.ctx, holder.Key, a); err != nil {
		t.Fatal(err)
	}
	if hd := f.inspect(in, holder.Key); hd.Waiting != 1 {
		t.Fatalf("one waiter left of two: %+v", hd)
	}
	if err := w.Leave(f.ctx, holder.Key, b); err != nil {
		t.Fatal(err)
	}
	f.release(holder)
}

// A lock a release handed to the waiter at the head of the line, not yet
// claimed, is held, handed off, for the hand-off bound at most.
func inspectHandedOff(t *testing.T, h Harness) {
	f := open(t, h)
	in := f.inspector()
	w := as[store.Waker](f, "store.Waker", linesMeaning)
	holder := f.lease(f.key(), h.long())
	f.acquire(holder)
	waiter := waiterIn(random())
	f.queue(w, f.waitLease(holder.Key, waiter), waiter)
	f.release(holder)
	hd := f.inspect(in, holder.Key)
	if !hd.Held || !hd.HandedOff || hd.Lease <= 0 || hd.Lease > h.handOffBound() || hd.Waiting != 0 {
		t.Fatalf("handed to the waiter in line: %+v; want held, handed off, for at most %v, nobody else waiting", hd, h.handOffBound())
	}
	if err := w.Leave(f.ctx, holder.Key, waiter); err != nil {
		t.Fatal(err)
	}
	f.mustBeFree(holder.Key, "after the waiter it was handed to left")
}

// Through a Locker: Inspect hashes the key as Obtain does, and names the
// Locker's holder label.
func inspectThroughLocker(t *testing.T, h Harness) {
	f := open(t, h)
	f.inspector()
	l := f.locker(core.WithTTL(h.long()), core.WithHolder("pod-b"))
	key := random()
	lk, err := l.TryObtain(f.ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lk.Release(f.ctx) }()
	skey, _ := l.StoreKey(key)
	hd, err := f.locker().Inspect(f.ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if !hd.Held || hd.Holder != "pod-b" || hd.Fence != lk.Fence() || hd.StoreKey != skey {
		t.Fatalf("Locker.Inspect of a held key: %+v; want held by pod-b with fence %d under %s", hd, lk.Fence(), skey)
	}
}
