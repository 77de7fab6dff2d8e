package core

// Internal tests that force the order in which one slow Redlock node runs
// an acquire and its release, by holding back that node's calls.

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/internal/redistest"
)

// heldDoer passes calls through to a node, running hooks around its acquire
// and release scripts and counting the releases.
type heldDoer struct {
	doer
	beforeAcquire, afterAcquire, beforeRelease, afterRelease func()
	releases                                                 atomic.Int32
}

func (d *heldDoer) Do(ctx context.Context, args ...any) *redis.Cmd {
	run := func(f func()) {
		if f != nil {
			f()
		}
	}
	switch args[1] {
	case acquireCall.sha, acquireCall.source:
		run(d.beforeAcquire)
		defer run(d.afterAcquire)
	case releaseCall.sha, releaseCall.source:
		d.releases.Add(1)
		run(d.beforeRelease)
		defer run(d.afterRelease)
	}
	return d.doer.Do(ctx, args...)
}

// slowNodeStore is a five-node Redlock store whose last node's calls go
// through a heldDoer.
func slowNodeStore(t *testing.T) (*RedlockStore, *heldDoer, *redis.Client) {
	servers := redistest.StartN(t, 5)
	clients := make([]redis.UniversalClient, len(servers))
	for i, s := range servers {
		clients[i] = s.Client(t)
	}
	// Loaded ahead, so that no NOSCRIPT retry sends a script twice.
	for _, script := range []*redis.Script{acquireScript, releaseScript} {
		if err := script.Load(context.Background(), clients[4]).Err(); err != nil {
			t.Fatal(err)
		}
	}
	s := NewRedlockStore(clients...).WithNodeTimeout(5 * time.Second)
	slow := &heldDoer{doer: s.nodes[4].d}
	s.nodes[4].d = slow
	return s, slow, clients[4].(*redis.Client)
}

// settle waits until every answer about the lease is in and, if some node
// was asked again, that call has answered too.
func settle(t *testing.T, s *RedlockStore, slow *heldDoer, releases int32) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		s.late.mu.Lock()
		tracked := len(s.late.byLease)
		s.late.mu.Unlock()
		if tracked == 0 && slow.releases.Load() >= releases {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still tracked: %d leases; %d releases on the slow node, want %d", tracked, slow.releases.Load(), releases)
		}
	}
}

// The release runs on the slow node before its acquire: the grant that
// lands then is taken back.
func TestRedlockReleaseBeforeSlowGrant(t *testing.T) {
	s, slow, node := slowNodeStore(t)
	released := make(chan struct{})
	var once atomic.Bool
	slow.beforeAcquire = func() { <-released }
	slow.afterRelease = func() {
		if once.CompareAndSwap(false, true) {
			close(released)
		}
	}
	ctx := context.Background()
	const key = "reqlock:{order}"

	if _, err := s.Acquire(ctx, Lease{Key: key, Token: "tok", TTL: 10 * time.Second}); err != nil {
		t.Fatalf("Acquire on four nodes: %v", err)
	}
	if err := s.Release(ctx, key, "tok"); err != nil {
		t.Fatalf("Release: %v", err)
	}
	settle(t, s, slow, 2)
	if n := slow.releases.Load(); n != 2 {
		t.Fatalf("%d releases on the slow node, want 2: the release, then the take-back", n)
	}
	if v, err := node.Get(ctx, key).Result(); err != redis.Nil {
		t.Fatalf("slow node still holds %q (%v) after the take-back", v, err)
	}
}

// The slow node runs its acquire before the release but answers only after
// the release was sent: the release deletes the grant, and the node is not
// asked again.
func TestRedlockLateAnswerBeforeRelease(t *testing.T) {
	s, slow, node := slowNodeStore(t)
	sent := make(chan struct{})
	var once atomic.Bool
	slow.afterAcquire = func() { <-sent }
	slow.beforeRelease = func() {
		if once.CompareAndSwap(false, true) {
			close(sent)
		}
	}
	ctx := context.Background()
	const key = "reqlock:{order}"

	if _, err := s.Acquire(ctx, Lease{Key: key, Token: "tok", TTL: 10 * time.Second}); err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if err := s.Release(ctx, key, "tok"); err != nil {
		t.Fatalf("Release: %v", err)
	}
	settle(t, s, slow, 1)
	if n := slow.releases.Load(); n != 1 {
		t.Fatalf("%d releases on the slow node, want 1: its release deleted the grant", n)
	}
	if v, err := node.Get(ctx, key).Result(); err != redis.Nil {
		t.Fatalf("slow node still holds %q (%v)", v, err)
	}
}
