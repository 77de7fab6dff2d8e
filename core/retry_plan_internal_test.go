package core

import (
	"testing"
	"time"

	cenkalti "github.com/cenkalti/backoff/v4"
)

// waitsOf counts what b returns before Stop, up to max, and returns the first.
func waitsOf(b cenkalti.BackOff, max int) (n int, first time.Duration) {
	for ; n < max; n++ {
		d := b.NextBackOff()
		if d < 0 {
			return n, first
		}
		if n == 0 {
			first = d
		}
	}
	return n, first
}

// A queued caller's policy is counted by the queue's time, a chunk of its
// waits at a time: the waits left at its turn are the policy's count less
// those that passed queued, whatever the count, and they start from the
// policy's first wait.
func TestPlanCountsTheWaitsSpentQueued(t *testing.T) {
	const d = 10 * time.Millisecond
	limited := func(n uint64) cenkalti.BackOff {
		return cenkalti.WithMaxRetries(cenkalti.NewConstantBackOff(d), n)
	}
	start := time.Unix(1000, 0)
	for _, c := range []struct {
		name   string
		waits  uint64
		chunks int           // chunks whose time passed queued
		more   time.Duration // queued past them
		left   int
	}{
		{"none spent", 100, 0, 0, 100},
		{"part of a wait", 100, 0, d / 2, 100},
		{"one wait", 2, 0, d, 1},
		{"within the first chunk", 100, 0, 30 * d, 70},
		{"past the first chunk", 100, 1, 5 * d, 31},
		{"past many chunks", 1000, 10, 0, 1000 - 10*plannedWaits},
		{"a count of the chunk's size", plannedWaits, 0, 20 * d, plannedWaits - 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newPlan(limited(c.waits), start)
			due, counted := p.next()
			if !counted {
				t.Fatal("a constant policy's waits cannot be counted")
			}
			for range c.chunks {
				if p.stop {
					t.Fatalf("the policy stopped after %d waits", p.drawn)
				}
				due, _ = p.next()
			}
			at := due.Add(-time.Duration(len(p.chunk)) * d).Add(c.more)
			b := p.turn(at, cenkalti.NewConstantBackOff(d))
			if n, _ := waitsOf(b, 10000); n != c.left {
				t.Fatalf("%d waits left at the turn, want %d", n, c.left)
			}
		})
	}
}

// A policy that gives up within the first chunk is due to give up when
// its waits have passed, and one that never does (Exponential, as the
// default) starts again from its first wait at the turn, however long the
// caller queued: its first polls are not late.
func TestPlanEndsOrStartsAfresh(t *testing.T) {
	start := time.Unix(1000, 0)
	p := newPlan(cenkalti.WithMaxRetries(cenkalti.NewConstantBackOff(time.Millisecond), 5), start)
	due, counted := p.next()
	if !counted || !p.stop || !due.Equal(start.Add(5*time.Millisecond)) {
		t.Fatalf("Limit(Constant(1ms), 5) is due at %v (counted %v, stop %v), want 5ms after the start, stopped", due.Sub(start), counted, p.stop)
	}

	endless := func() cenkalti.BackOff {
		b := &cenkalti.ExponentialBackOff{InitialInterval: 10 * time.Millisecond, RandomizationFactor: 0,
			Multiplier: 1.5, MaxInterval: 500 * time.Millisecond, Stop: cenkalti.Stop, Clock: cenkalti.SystemClock}
		b.Reset()
		return b
	}
	p = newPlan(endless(), start)
	var due2 time.Time
	for range 3 {
		due2, _ = p.next()
	}
	b := p.turn(due2.Add(-time.Second), endless())
	if n, first := waitsOf(b, 1000); n != 1000 || first != 10*time.Millisecond {
		t.Fatalf("an endless policy after the turn: %d waits, the first %v; want no end, and 10ms first", n, first)
	}

	// A policy that waits nothing cannot be counted by the queue's time.
	if _, counted := newPlan(&cenkalti.ZeroBackOff{}, start).next(); counted {
		t.Fatal("a zero backoff's waits are counted")
	}
}
