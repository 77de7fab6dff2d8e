package etcdstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/etcdtest"
)

// A head whose line lease has less time left by our clock than core's
// drift margin is never handed a Grant it cannot rely on: the store renews
// the lease first, and the grant counts from the renewal.
func TestHeadClaimNeverGrantsNoValidity(t *testing.T) {
	s := New(etcdtest.Start(t).Client(t))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const key = "head/{validity}"
	ttl := 5 * time.Second

	sub := s.Subscribe("head/", "i1", func(string, string) {})
	release, err := sub.Hold(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if _, err := s.Acquire(ctx, store.Lease{Key: key, Token: "holder", TTL: ttl}); err != nil {
		t.Fatalf("holder: %v", err)
	}
	if _, _, err := s.AcquireQueued(ctx, store.Lease{Key: key, Token: "w-0", TTL: ttl}, "i1/w", false); !errors.Is(err, core.ErrNotObtained) {
		t.Fatalf("waiter joins the line: %v", err)
	}
	if err := s.Release(ctx, key, "holder"); err != nil {
		t.Fatalf("release: %v", err)
	}
	_, l := s.lines.place("i1/w", key)
	if l == nil {
		t.Fatal("the waiter has no place in line")
	}
	// Alive by our clock, but with less left than the drift margin.
	l.mu.Lock()
	l.deadline = time.Now().Add(drift(ttl) / 2)
	l.mu.Unlock()
	g, _, err := s.AcquireQueued(ctx, store.Lease{Key: key, Token: "w-1", TTL: ttl}, "i1/w", false)
	if err != nil {
		if errors.Is(err, ErrLeaseExpired) {
			return // refused outright: no grant at all
		}
		t.Fatalf("head's attempt: %v", err)
	}
	if g.Validity <= 0 {
		t.Fatalf("the head was handed a grant with validity %v", g.Validity)
	}
	_ = s.Release(ctx, key, "w-1")
}
