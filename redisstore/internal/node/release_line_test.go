package node

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core/store"
)

// joinLine puts waiters in key's line as their refused attempts do
// (acquire.lua with a waiter): the key must be held.
func joinLine(t *testing.T, c *redis.Client, key string, waiters ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, w := range waiters {
		l := store.Lease{Key: key, Token: store.HandedOverToken(w), TTL: time.Second}
		a, err := acquireReply(run(ctx, c, acquireQueuedCall, queuedArgs(l, int64(1000), int64(60000), "", w, false)))
		if err != nil || a.fence != 0 {
			t.Fatalf("%s joining the line: %+v, %v; want refused", w, a, err)
		}
	}
}

// commandCalls is how many times Redis ran cmd since the last CONFIG
// RESETSTAT, scripts' calls included.
func commandCalls(t *testing.T, c *redis.Client, cmd string) int {
	t.Helper()
	info := c.Info(context.Background(), "commandstats").Val()
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_"+cmd+":calls="); ok {
			n, _ := strconv.Atoi(strings.SplitN(rest, ",", 2)[0])
			return n
		}
	}
	return 0
}

// A release with nobody in line never looks at the line: the sign that a
// waiter joined is missing, so the lock goes with no LPOP. A waiter that
// joins sets the sign, for as long as the line lives; the release that
// finds the line empty again takes the sign away.
func TestLeanReleaseLooksAtLineOnlyWithSign(t *testing.T) {
	s, c, ctx := leanFixture(t)
	l := store.Lease{Key: "reqlock:{line-sign}", Token: "a", TTL: time.Second}
	c.ConfigResetStat(ctx)
	for i := range 3 {
		l.Token = "a" + strconv.Itoa(i)
		if _, err := s.Acquire(ctx, l); err != nil {
			t.Fatal(err)
		}
		if err := s.Release(ctx, l.Key, l.Token); err != nil {
			t.Fatal(err)
		}
	}
	if n := commandCalls(t, c, "lpop") + commandCalls(t, c, "lrange"); n != 0 {
		t.Fatalf("%d line look-ups with nobody ever in line", n)
	}

	l.Token = "b"
	if _, err := s.Acquire(ctx, l); err != nil {
		t.Fatal(err)
	}
	joinLine(t, c, l.Key, "i1/w1")
	if p := c.PTTL(ctx, l.Key+lineSignSuffix).Val(); p < c.PTTL(ctx, l.Key+queueSuffix).Val()-time.Second || p <= 0 {
		t.Fatalf("sign lives %v, the line %v", p, c.PTTL(ctx, l.Key+queueSuffix).Val())
	}
	if err := s.Release(ctx, l.Key, l.Token); err != nil {
		t.Fatal(err)
	}
	if v := c.Get(ctx, l.Key).Val(); v != "~i1/w1" {
		t.Fatalf("the lock holds %q, want the hand-off to i1/w1", v)
	}
	// The head claims its hand-off and releases: the line is empty now,
	// and the sign goes with this release.
	h := store.Lease{Key: l.Key, Token: store.HandedOverToken("i1/w1"), TTL: time.Second}
	if a, err := acquireReply(run(ctx, c, acquireQueuedCall, queuedArgs(h, int64(1000), int64(60000), "", "i1/w1", false))); err != nil || a.fence == 0 {
		t.Fatalf("claiming the hand-off: %+v, %v", a, err)
	}
	if err := s.Release(ctx, h.Key, h.Token); err != nil {
		t.Fatal(err)
	}
	if n := c.Exists(ctx, l.Key, l.Key+queueSuffix, l.Key+lineSignSuffix).Val(); n != 0 {
		t.Fatalf("%d of lock, line and sign left after the last waiter's release", n)
	}
}
