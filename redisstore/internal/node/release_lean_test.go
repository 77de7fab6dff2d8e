package node

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/store"
)

// A release sent again (its first copy's reply was lost) after the lock
// went to someone else frees nothing: the later holder keeps it.
func TestResentReleaseCannotFreeLaterHolder(t *testing.T) {
	s, c, ctx := leanFixture(t)
	a := store.Lease{Key: "reqlock:{resent-release}", Token: "a", TTL: time.Second}
	if _, err := s.Acquire(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, a.Key, a.Token); err != nil {
		t.Fatal(err)
	}
	b := store.Lease{Key: a.Key, Token: "b", TTL: time.Second}
	if _, err := s.Acquire(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, a.Key, a.Token); !errors.Is(err, store.ErrNotHeld) {
		t.Fatalf("the copy: %v, want ErrNotHeld", err)
	}
	if v := c.Get(ctx, b.Key).Val(); v != b.Token {
		t.Fatalf("the lock holds %q, want the later holder's", v)
	}
}

// With a line, the lean release hands the lock to the head, under '~' and
// its name, and tells only the head's instance, with the next fence in
// digits: above the last one, also when it is past what a Lua number prints
// without an exponent.
func TestLeanReleaseHandsOffWithFence(t *testing.T) {
	s, c, ctx := leanFixture(t)
	const prefix = "reqlock:"
	l := store.Lease{Key: prefix + "{lean-handoff}", Token: "holder", TTL: time.Second}
	g, err := s.Acquire(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	ps := c.Subscribe(ctx, wakeChannel(prefix, "i1"))
	t.Cleanup(func() { _ = ps.Close() })
	if _, err := ps.Receive(ctx); err != nil { // the subscription's confirmation
		t.Fatal(err)
	}
	joinLine(t, c, l.Key, "i1/w1", "i2/w2")
	if err := s.Release(ctx, l.Key, l.Token); err != nil {
		t.Fatal(err)
	}
	if v := c.Get(ctx, l.Key).Val(); v != "~i1/w1" {
		t.Fatalf("the lock holds %q, want the hand-off to i1/w1", v)
	}
	if q := c.LRange(ctx, l.Key+queueSuffix, 0, -1).Val(); len(q) != 1 || q[0] != "i2/w2" {
		t.Fatalf("line %q, want [i2/w2]", q)
	}
	msg, err := ps.ReceiveMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	key, waiter, fence, ok := parseWake(msg.Payload)
	if !ok || key != l.Key || waiter != "i1/w1" || fence <= g.Fence {
		t.Fatalf("told %q: %q %q fence %d; want the head, fence above %d", msg.Payload, key, waiter, fence, g.Fence)
	}
	if v := c.Get(ctx, l.Key+fenceSuffix).Val(); v != strconv.FormatUint(fence, 10) {
		t.Fatalf("counter %s, told %d", v, fence)
	}
}
