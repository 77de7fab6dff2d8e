package redlock

// Internal tests that force the order in which one slow Redlock node runs
// an acquire and its release, by holding back that node's calls.

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore/internal/node"
)

// heldHook passes a node's commands through, running hooks around its
// acquire and release scripts and counting the releases.
type heldHook struct {
	beforeAcquire, afterAcquire, beforeRelease, afterRelease func()
	releases                                                 atomic.Int32
}

func (d *heldHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (d *heldHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (d *heldHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		run := func(f func()) {
			if f != nil {
				f()
			}
		}
		switch node.ScriptOf(cmd.Args()) {
		case "acquire":
			run(d.beforeAcquire)
			defer run(d.afterAcquire)
		case "release":
			d.releases.Add(1)
			run(d.beforeRelease)
			defer run(d.afterRelease)
		}
		return next(ctx, cmd)
	}
}

// slowNodeStore is a five-node Redlock store whose last node's commands go
// through a heldHook.
func slowNodeStore(t *testing.T) (*Store, *heldHook, *redis.Client) {
	servers := redistest.StartN(t, 5)
	clients := make([]redis.UniversalClient, len(servers))
	for i, s := range servers {
		clients[i] = s.Client(t)
	}
	// Loaded ahead, so that no NOSCRIPT retry sends a script twice.
	if err := node.LoadScripts(context.Background(), clients[4]); err != nil {
		t.Fatal(err)
	}
	slow := &heldHook{}
	clients[4].AddHook(slow)
	s := New(clients...).WithNodeTimeout(5 * time.Second)
	return s, slow, clients[4].(*redis.Client)
}

// settle waits until every answer about the lease is in and, if some node
// was asked again, that call has answered too.
func settle(t *testing.T, s *Store, slow *heldHook, releases int32) {
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

// TestRedlockSlowNodeOrders forces each order in which the slow node can
// run an acquire and its release, and checks that it keeps nothing and is
// asked again only when it must be.
func TestRedlockSlowNodeOrders(t *testing.T) {
	cases := []struct {
		name string
		// hold sets the slow node's hooks; wait blocks until signal ran.
		hold     func(d *heldHook, wait, signal func())
		releases int32 // calls of the release script on the slow node
	}{
		{"release runs first, then the grant lands: taken back",
			func(d *heldHook, wait, signal func()) { d.beforeAcquire, d.afterRelease = wait, signal }, 2},
		{"grant runs first, answers after the release was sent: not asked again",
			func(d *heldHook, wait, signal func()) { d.afterAcquire, d.beforeRelease = wait, signal }, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, slow, node := slowNodeStore(t)
			ch := make(chan struct{})
			var once sync.Once
			c.hold(slow, func() { <-ch }, func() { once.Do(func() { close(ch) }) })
			ctx := context.Background()
			const key = "reqlock:{order}"

			if _, err := s.Acquire(ctx, store.Lease{Key: key, Token: "tok", TTL: 10 * time.Second}); err != nil {
				t.Fatalf("Acquire: %v", err)
			}
			if err := s.Release(ctx, key, "tok"); err != nil {
				t.Fatalf("Release: %v", err)
			}
			settle(t, s, slow, c.releases)
			if n := slow.releases.Load(); n != c.releases {
				t.Fatalf("%d releases on the slow node, want %d", n, c.releases)
			}
			if v, err := node.Get(ctx, key).Result(); err != redis.Nil {
				t.Fatalf("slow node still holds %q (%v)", v, err)
			}
		})
	}
}
