package redlock_test

import (
	"context"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/redisstore/redlock"
)

// Acquire answers on a quorum while a slow node is still being asked, and
// the lock can be released before that node runs the acquire. Whatever the
// order the slow node runs the two in, it must not keep the lock. Here the
// order is the scheduler's, through a real SIGSTOP; redlock_order_test.go
// forces each order in turn.
func TestRedlockSlowNodeKeepsNothingAfterRelease(t *testing.T) {
	servers, clients := startRedlock(t, 5)
	s := redlock.New(clients...).WithNodeTimeout(2 * time.Second)
	ctx := ctxT(t, 10*time.Second)
	const key = "reqlock:{slow}"

	for round := range 5 {
		token := "t" + string(rune('a'+round))
		slow := servers[round]
		slow.Pause()
		resumed := make(chan struct{})
		go func() { time.Sleep(50 * time.Millisecond); slow.Resume(); close(resumed) }()

		if _, err := s.Acquire(ctx, store.Lease{Key: key, Token: token, TTL: 10 * time.Second}); err != nil {
			t.Fatalf("round %d: Acquire: %v", round, err)
		}
		if err := s.Release(ctx, key, token); err != nil {
			t.Fatalf("round %d: Release: %v", round, err)
		}
		<-resumed
		// The slow node's acquire and release both run after the resume, in
		// whichever order the server reads them in; give its answers time
		// to come back: nobody may hold the lock for a while on end (the
		// node may not have run either yet when first looked at).
		for deadline, clear := time.Now().Add(2*time.Second), time.Now(); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if holders(t, clients, key, token) > 0 {
				clear = time.Now()
			} else if time.Since(clear) > 300*time.Millisecond {
				break
			}
		}
		if n := holders(t, clients, key, token); n != 0 {
			t.Fatalf("round %d: %d nodes still hold a released lock", round, n)
		}
	}
	// And the key is free for the next holder on every node.
	if _, err := s.Acquire(context.Background(), store.Lease{Key: key, Token: "next", TTL: time.Second}); err != nil {
		t.Fatalf("next holder: %v", err)
	}
	if n := holders(t, clients, key, "next"); n < 3 {
		t.Fatalf("next holder on %d nodes", n)
	}
}
