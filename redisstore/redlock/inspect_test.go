package redlock_test

import (
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/lockertest"
	"github.com/reqlock/reqlock/redisstore/redlock"
)

// inspectStore is Redlock on five masters, with the masters whose writes
// the Inspect checks count.
func inspectStore() lockertest.InspectStore {
	return lockertest.InspectStore{Name: "redlock", FenceKept: true, Open: func(t *testing.T) (core.Store, []redis.UniversalClient) {
		_, clients := startRedlock(t, 5)
		return redlock.New(clients...).WithNodeTimeout(time.Second), clients
	}}
}

// A free key, a held one, a waiter in line, the hand-over to the waiter and
// the release: what Inspect says at each step.
func TestInspectLifecycle(t *testing.T) { lockertest.InspectLifecycle(t, inspectStore()) }

// Inspect writes nothing, on any master.
func TestInspectIsReadOnly(t *testing.T) { lockertest.InspectIsReadOnly(t, inspectStore()) }

// Redlock: held only where a quorum agrees on one holder; a minority copy
// (a failed acquire not yet taken back) leaves the key free; too few
// answers to tell is a store failure.
func TestInspectRedlockQuorumRule(t *testing.T) {
	servers, clients := startRedlock(t, 5)
	s := redlock.New(clients...).WithNodeTimeout(time.Second)
	ctx := ctxT(t, 30*time.Second)
	l := newLocker(s, core.WithHolder("pod-a"))
	skey, _ := l.StoreKey("k")

	// Two nodes hold a stray copy: no quorum.
	for _, c := range clients[:2] {
		c.Set(ctx, skey, "stray.pod-x", 5*time.Second)
	}
	if h := lockertest.MustInspect(t, ctx, l, "k"); h.Held {
		t.Fatalf("two of five copies: %+v", h)
	}
	// With one node down the two copies plus it could still be a quorum.
	servers[4].Kill()
	if _, err := l.Inspect(ctx, "k"); !errors.Is(err, core.ErrUnavailable) {
		t.Fatalf("two copies, one node down: %v, want ErrUnavailable", err)
	}
	// Three copies, one down: held, lease the quorum-th longest.
	clients[2].Set(ctx, skey, "stray.pod-x", 3*time.Second)
	h := lockertest.MustInspect(t, ctx, l, "k")
	if !h.Held || h.Holder != "pod-x" || h.Lease > 3*time.Second || h.Lease < 2*time.Second {
		t.Fatalf("three of five copies: %+v", h)
	}
}
