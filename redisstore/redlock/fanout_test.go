package redlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/redisstore/internal/node"
)

// The calls a quorum did not wait for go on after fanOutUntil returned and
// after the caller's context ended: a release that a quorum answered must
// still reach the slower nodes. They stay bounded by the per-node timeout.
func TestFanOutUntilOutlivesCaller(t *testing.T) {
	nodes := []*node.Node{{}, {}, {}}
	slow := make(chan struct{})
	seen := make(chan error, 2)
	ctx, cancel := context.WithCancel(context.Background())
	answers := fanOutUntil(ctx, nodes, 5*time.Second,
		func(ctx context.Context, n *node.Node) error {
			if n == nodes[0] {
				return nil // the quorum of one
			}
			<-slow
			seen <- ctx.Err()
			return nil
		},
		func(err error) error { return err },
		func(err error) bool { return err == nil }, 1)
	if answers[0] != nil || !errors.Is(answers[1], errNotAwaited) || !errors.Is(answers[2], errNotAwaited) {
		t.Fatalf("answers %v, want nil then two not awaited", answers)
	}
	cancel()
	close(slow)
	for range 2 {
		if err := <-seen; err != nil {
			t.Fatalf("a call not awaited saw its context end with the caller's: %v", err)
		}
	}

	// Bounded by the timeout all the same.
	answers = fanOutUntil(context.Background(), nodes, 50*time.Millisecond,
		func(ctx context.Context, n *node.Node) error { <-ctx.Done(); return ctx.Err() },
		func(err error) error { return err }, nil, 0)
	for i, err := range answers {
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("node %d: %v, want DeadlineExceeded", i, err)
		}
	}
}

// A caller that gives up stops waiting at once, and its error says so. Under
// fanOut (Extend) the calls end with it too: one left running could land
// after a later renewal and undo it.
func TestFanOutCallerGivesUp(t *testing.T) {
	nodes := []*node.Node{{}, {}}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	seen := make(chan error, len(nodes))
	answers := fanOut(ctx, nodes, time.Minute,
		func(ctx context.Context, n *node.Node) error {
			<-ctx.Done()
			seen <- ctx.Err()
			return ctx.Err()
		},
		func(err error) error { return err })
	for i, err := range answers {
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("node %d: %v, want Canceled", i, err)
		}
	}
	for range nodes {
		if err := <-seen; !errors.Is(err, context.Canceled) {
			t.Fatalf("a call saw %v, want its context cancelled with the caller's", err)
		}
	}
}
