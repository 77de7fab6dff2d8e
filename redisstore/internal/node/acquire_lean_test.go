package node

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/redistest"
)

// leanFixture is a store over a fresh server, with a raw client beside it.
func leanFixture(t *testing.T) (*Node, *redis.Client, context.Context) {
	t.Helper()
	c := redistest.Start(t).Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return New(c), c, ctx
}

// The lean script counts fences in Lua numbers; a counter at or past 2^53
// - 1 goes to acquire.lua's digits, which stay exact up to 19 digits and
// refuse beyond. Either way the lock is taken once, or not at all.
func TestLeanAcquireLeavesLargeFencesToDigits(t *testing.T) {
	s, c, ctx := leanFixture(t)
	for _, tc := range []struct {
		counter, want string // want "": exhausted
	}{
		{"9007199254740990", "9007199254740991"}, // the last one a number holds, with its successor
		{"9007199254740991", "9007199254740992"},
		{"9007199254740992", "9007199254740993"}, // a double would say ...992 again
		{"9999999999999999998", "9999999999999999999"},
		{"9999999999999999999", ""},
	} {
		l := store.Lease{Key: "reqlock:{lean-big-" + tc.counter + "}", Token: "t", TTL: time.Second}
		c.Set(ctx, l.Key+fenceSuffix, tc.counter, time.Minute)
		g, err := s.Acquire(ctx, l)
		if tc.want == "" {
			if err == nil || !strings.Contains(err.Error(), "exhausted") {
				t.Errorf("counter %s: %+v, %v; want exhausted", tc.counter, g, err)
			}
			if c.Exists(ctx, l.Key).Val() != 0 {
				t.Errorf("counter %s: the lock was kept", tc.counter)
			}
			if v := c.Get(ctx, l.Key+fenceSuffix).Val(); v != tc.counter {
				t.Errorf("counter %s: left at %s", tc.counter, v)
			}
			continue
		}
		if err != nil || strconv.FormatUint(g.Fence, 10) != tc.want {
			t.Errorf("counter %s: fence %d, %v; want %s", tc.counter, g.Fence, err, tc.want)
		}
		if v := c.Get(ctx, l.Key+fenceSuffix).Val(); v != tc.want {
			t.Errorf("counter %s: stored %s, want %s", tc.counter, v, tc.want)
		}
		if v := c.Get(ctx, l.Key).Val(); v != l.Token {
			t.Errorf("counter %s: lock holds %q", tc.counter, v)
		}
	}
}

// A counter ahead of the clock (handed out faster than it ticks, or a clock
// that stepped back) still moves on by one.
func TestLeanAcquireCounterAheadOfClock(t *testing.T) {
	s, c, ctx := leanFixture(t)
	l := store.Lease{Key: "reqlock:{lean-ahead}", Token: "t", TTL: time.Second}
	ahead := time.Now().Add(time.Hour).UnixMicro()
	c.Set(ctx, l.Key+fenceSuffix, ahead, time.Minute)
	g, err := s.Acquire(ctx, l)
	if err != nil || g.Fence != uint64(ahead)+1 {
		t.Fatalf("fence %d, %v; want %d", g.Fence, err, ahead+1)
	}
	if err := s.Release(ctx, l.Key, l.Token); err != nil {
		t.Fatal(err)
	}
	l.Token = "u"
	if g2, err := s.Acquire(ctx, l); err != nil || g2.Fence != g.Fence+1 {
		t.Fatalf("next fence %d, %v; want %d", g2.Fence, err, g.Fence+1)
	}
}

// A copy of an attempt that finds its own token (its first copy landed
// first) is answered by acquire.lua: the lock is ours, with a fresh fence,
// and its lease only grows.
func TestLeanAcquireFindsItsOwnToken(t *testing.T) {
	s, c, ctx := leanFixture(t)
	l := store.Lease{Key: "reqlock:{lean-own}", Token: "t", TTL: 5 * time.Second}
	first, err := s.Acquire(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	l.TTL = time.Second
	again, err := s.Acquire(ctx, l)
	if err != nil || again.Fence <= first.Fence {
		t.Fatalf("again: %+v, %v; want ours, fence above %d", again, err, first.Fence)
	}
	if p := c.PTTL(ctx, l.Key).Val(); p <= time.Second {
		t.Errorf("lease cut to %v", p)
	}
	other := store.Lease{Key: l.Key, Token: "u", TTL: time.Second}
	if _, err := s.Acquire(ctx, other); !isNotObtained(err) {
		t.Errorf("another token: %v, want not obtained", err)
	}
}

// A clock of 16 digits (in microseconds) goes through the lean script; an
// odd one meets acquire.lua's check there too.
func TestLeanAcquireClocks(t *testing.T) {
	s, c, ctx := leanFixture(t)
	l := store.Lease{Key: "reqlock:{lean-clock}", Token: "t", TTL: time.Second}
	clock := time.Now().UnixMicro()
	fence, _, err := AcquireAbove(ctx, s, l, strconv.FormatInt(clock, 10), "")
	if err != nil || fence != uint64(clock) {
		t.Fatalf("fence %d, %v; want the clock %d", fence, err, clock)
	}
	for _, bad := range []string{"0123", "1e30", "-5", "12345678901234567890"} {
		l := store.Lease{Key: "reqlock:{lean-clock-" + bad + "}", Token: "t", TTL: time.Second}
		if _, _, err := AcquireAbove(ctx, s, l, bad, ""); err == nil || !strings.Contains(err.Error(), "fence clock") {
			t.Errorf("clock %q: %v, want refused", bad, err)
		}
		if c.Exists(ctx, l.Key).Val() != 0 {
			t.Errorf("clock %q: the lock was taken", bad)
		}
	}
}

// A release leaves the token's cancel marker only when its acquire may have
// a copy still on its way: one the store sent again.
func TestReleaseMarksOnlyResentTokens(t *testing.T) {
	srv := redistest.Start(t)
	opts := redistest.ClientOptions(srv.Addr)
	opts.MaxRetries = 3 // go-redis's default: it may resend
	c := redis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := New(c)
	for _, resent := range []bool{false, true} {
		l := store.Lease{Key: "reqlock:{marks}", Token: "t" + strconv.FormatBool(resent), TTL: time.Second}
		if _, err := s.Acquire(ctx, l); err != nil {
			t.Fatal(err)
		}
		if resent {
			s.resent.note(l.Token)
		}
		if err := s.Release(ctx, l.Key, l.Token); err != nil {
			t.Fatal(err)
		}
		if got := c.Exists(ctx, cancelKey(l.Key, l.Token)).Val() == 1; got != resent {
			t.Errorf("resent %v: marker left %v", resent, got)
		}
		if s.resent.has(l.Token) {
			t.Errorf("resent %v: token still noted after its release", resent)
		}
	}
}

func isNotObtained(err error) bool {
	var taken *store.NotObtainedError
	return errors.As(err, &taken)
}
