package node

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
)

// A token the store resent is remembered until a marker is left for it:
// an acquire that failed is cancelled (as the Locker does with an outcome
// it does not know), and the cancel leaves the marker, so the token is
// forgotten.
func TestResentTokenOfFailedAcquireForgotten(t *testing.T) {
	s, p, _, ctx := resendingNode(t)
	const key = "reqlock:{failed-resent}"
	l := store.Lease{Key: key, Token: "failed", TTL: 10 * time.Second}

	p.Hold(faultproxy.Upstream) // every copy is held: the acquire fails
	actx, cancel := context.WithTimeout(ctx, 3*time.Second)
	_, err := s.Acquire(actx, l)
	cancel()
	if err == nil {
		t.Fatal("Acquire succeeded through a held link")
	}
	p.Release(faultproxy.Upstream)
	p.Heal()
	// What the Locker does with an acquire whose outcome is unknown.
	if err := s.Cancel(ctx, l); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	if s.resent.has(l.Token) {
		t.Fatalf("after the acquire failed and was cancelled (its marker left), the store still "+
			"remembers its token (%d remembered)", s.resent.n.Load())
	}
}

// A waiter's name, which all of its wait's attempts carry, is remembered
// past a refusal (voiding it would void the wait's next attempts) and
// forgotten by the wait's Leave, which leaves its marker; a refused plain
// attempt is voided at once and forgotten.
func TestResentTokenForgottenOnceVoided(t *testing.T) {
	s, p, direct, ctx := resendingNode(t)
	other := New(direct)
	const key = "reqlock:{voided-resent}"
	holder := store.Lease{Key: key, Token: "holder", TTL: 10 * time.Second}
	if _, err := other.Acquire(ctx, holder); err != nil {
		t.Fatal(err)
	}

	h := p.HoldNext(faultproxy.Upstream)
	plain := store.Lease{Key: key, Token: "plain", TTL: 10 * time.Second}
	if _, err := s.Acquire(ctx, plain); !isNotObtained(err) {
		t.Fatalf("Acquire: %v, want not obtained", err)
	}
	h.Release()
	if s.resent.has(plain.Token) {
		t.Fatal("a refused attempt voided by its marker is still remembered")
	}
	if n, err := direct.Exists(ctx, cancelKey(key, plain.Token)).Result(); err != nil || n != 1 {
		t.Fatalf("the refused attempt's marker: %d, %v; want it there", n, err)
	}

	const waiter = "inst/1"
	queued := store.Lease{Key: key, Token: store.HandedOverToken(waiter), TTL: 10 * time.Second}
	h = p.HoldNext(faultproxy.Upstream)
	if _, _, err := s.AcquireQueued(ctx, queued, waiter, false); !isNotObtained(err) {
		t.Fatalf("AcquireQueued: %v, want not obtained", err)
	}
	h.Release()
	if !s.resent.has(queued.Token) {
		t.Fatal("a waiter's refused attempt was forgotten while the wait goes on")
	}
	if n, _ := direct.Exists(ctx, cancelKey(key, queued.Token)).Result(); n != 0 {
		t.Fatal("a waiter's refused attempt voided the wait's name: its next attempts would take nothing")
	}
	if err := s.Leave(ctx, key, waiter); err != nil {
		t.Fatal(err)
	}
	if s.resent.has(queued.Token) {
		t.Fatal("the wait left, its marker left, and its name is still remembered")
	}
	if n, err := direct.Exists(ctx, cancelKey(key, queued.Token)).Result(); err != nil || n != 1 {
		t.Fatalf("the wait's marker after Leave: %d, %v; want it there", n, err)
	}
}

// The memory holds at most resentCap tokens, each note in O(1); once one
// was dropped to stay within it, every token counts as noted, so that the
// release of the dropped one still leaves its marker.
func TestResentTokensBounded(t *testing.T) {
	var r resentTokens
	for i := range resentCap {
		r.note(strconv.Itoa(i))
	}
	if r.has("never noted") {
		t.Fatal("a token never noted counts as noted before anything was dropped")
	}
	r.note("one more")
	if got := r.n.Load(); got != resentCap {
		t.Fatalf("%d tokens remembered, want at most %d", got, resentCap)
	}
	if len(r.m) != r.order.Len() {
		t.Fatalf("map %d, order %d: out of step", len(r.m), r.order.Len())
	}
	if !r.has("0") {
		t.Fatal("the dropped token no longer counts as noted: its release would leave no marker")
	}
	if !r.has("never noted") {
		t.Fatal("after a drop, a token counts as not noted; it may be the one dropped")
	}
	for i := range resentCap {
		r.forget(strconv.Itoa(i))
	}
	r.forget("one more")
	if r.n.Load() != 0 || r.order.Len() != 0 {
		t.Fatalf("forget kept %d tokens (%d in order)", r.n.Load(), r.order.Len())
	}
}
