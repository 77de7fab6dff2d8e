package retrycases

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

// The bounds the cases hold a store to.
const (
	// GiveUpWithin bounds Obtain under Limit(Constant(5ms), 2): two waits
	// of at most 7.5 ms, three attempts and the subscription to releases,
	// with room for a loaded machine.
	GiveUpWithin = 100 * time.Millisecond
	// Interval is the constant policy whose schedule is timed: attempts
	// come Interval ±50 % apart.
	Interval = 20 * time.Millisecond
	// timerSlack is how late a timer may fire on a loaded two-core machine
	// under -race, on top of the policy's upper bound: far below the
	// HandOffTimeout a wait used to be raised to.
	timerSlack = 50 * time.Millisecond
)

// Run runs every case on stores from open, each case on a store of its
// own.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("limit gives up on time", func(t *testing.T) { givesUpOnTime(t, open(t)) })
	t.Run("limit gives up before a short lease ends", func(t *testing.T) { givesUpBeforeLeaseEnds(t, open(t)) })
	t.Run("constant policy is the schedule", func(t *testing.T) { constantSchedule(t, open(t)) })
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func locker(s store.Store, opts ...core.Option) *core.Locker {
	return core.NewLocker(s, append([]core.Option{core.WithLogger(quiet)}, opts...)...)
}

// hold takes key for a holder of its own on s, with lease ttl and no
// renewal, and releases it at cleanup.
func hold(t *testing.T, ctx context.Context, s store.Store, key string, ttl time.Duration) *core.Lock {
	t.Helper()
	lk, err := locker(s, core.WithTTL(ttl), core.WithoutWatchdog()).TryObtain(ctx, key)
	if err != nil {
		t.Fatalf("the holder's TryObtain: %v", err)
	}
	t.Cleanup(func() { _ = lk.Release(context.Background()) })
	return lk
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Two waits of 5 ms on a key held for an hour: Obtain says the key is
// taken within GiveUpWithin, not after the store's polling interval.
func givesUpOnTime(t *testing.T, s store.Store) {
	ctx := testCtx(t)
	hold(t, ctx, s, "limit", time.Hour)
	rec := Record(s)
	waiter := locker(rec, core.WithRetry(backoff.Limit(backoff.Constant(5*time.Millisecond), 2)))
	start := time.Now()
	lk, err := waiter.Obtain(ctx, "limit")
	took := time.Since(start)
	if lk != nil {
		_ = lk.Release(ctx)
		t.Fatal("Obtain took a key held for an hour")
	}
	if !errors.Is(err, core.ErrNotObtained) {
		t.Fatalf("Obtain: %v, want ErrNotObtained", err)
	}
	if took > GiveUpWithin {
		t.Fatalf("Obtain gave up after %v, want within %v: two waits of 5 ms were asked for; attempts (from the start of Obtain): %v",
			took, GiveUpWithin, timeline(start, rec.Attempts()))
	}
}

// timeline says when each attempt was sent and answered, counted from
// start.
func timeline(start time.Time, as []Attempt) []string {
	var out []string
	for _, a := range as {
		out = append(out, fmt.Sprintf("%v→%v", a.Start.Sub(start).Round(100*time.Microsecond), a.End.Sub(start).Round(100*time.Microsecond)))
	}
	return out
}

// The holder's lease (200 ms) outlasts the two 5 ms waits the waiter asked
// for: the waiter gives up with the key still held, and does not stand in
// the way of anyone once the lease runs out.
func givesUpBeforeLeaseEnds(t *testing.T, s store.Store) {
	ctx := testCtx(t)
	const lease = 200 * time.Millisecond
	hold(t, ctx, s, "short", lease)
	rec := Record(s)
	waiter := locker(rec, core.WithRetry(backoff.Limit(backoff.Constant(5*time.Millisecond), 2)))
	start := time.Now()
	lk, err := waiter.Obtain(ctx, "short")
	took := time.Since(start)
	if lk != nil {
		_ = lk.Release(ctx)
		t.Fatalf("the waiter got the lock after %v: it asked to give up after two 5 ms waits, the holder's lease was %v; attempts: %v",
			took, lease, timeline(start, rec.Attempts()))
	}
	if !errors.Is(err, core.ErrNotObtained) || took > GiveUpWithin {
		t.Fatalf("Obtain: %v after %v, want ErrNotObtained within %v; attempts (from the start of Obtain): %v",
			err, took, GiveUpWithin, timeline(start, rec.Attempts()))
	}
	// The waiter that gave up left the line: once the lease has run out, a
	// third caller gets the key (stores with whole-second leases and lines
	// take up to a few seconds to let go).
	other := locker(s)
	deadline := time.Now().Add(5 * time.Second)
	for {
		lk, err := other.TryObtain(ctx, "short")
		if err == nil {
			_ = lk.Release(ctx)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the key is still taken %v after the waiter gave up: %v", time.Since(start), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A policy of Constant(Interval) that gives up after 10 waits, on a key
// held for an hour: 10 waits, each Interval ±50 % from the answer to one
// attempt to the next attempt.
func constantSchedule(t *testing.T, s store.Store) {
	ctx := testCtx(t)
	hold(t, ctx, s, "schedule", time.Hour)
	rec := Record(s)
	const waits = 10
	waiter := locker(rec, core.WithRetry(backoff.Limit(backoff.Constant(Interval), waits)))
	if _, err := waiter.Obtain(ctx, "schedule"); !errors.Is(err, core.ErrNotObtained) {
		t.Fatalf("Obtain: %v, want ErrNotObtained", err)
	}
	as := rec.Attempts()
	// A waiter's first attempt may come outside the store's line, and the
	// attempt that joins the line right after it: that is no wait.
	if len(as) == waits+2 && !as[0].Queued && as[1].Queued {
		as = as[1:]
	}
	if len(as) != waits+1 {
		t.Fatalf("%d attempts, want %d: one, then one after each of %d waits", len(as), waits+1, waits)
	}
	// A timer never fires early, but on a loaded machine it may fire late:
	// each wait is at least the policy's least, the middle one within its
	// bounds, and none more than timerSlack past them. A wait may end
	// sooner at a wake-up: the one here is the subscription coming up
	// after the waiter joined the line.
	lo, hi := Interval/2, Interval*3/2
	gs := gaps(as)
	var timed []time.Duration
	for i, gap := range gs {
		if gap < lo && listenedBetween(rec.Listened(), as[i].Start, as[i+1].Start) {
			continue
		}
		if gap < lo || gap > hi+timerSlack {
			t.Fatalf("wait %d lasted %v, want %v ±50%% (%v to %v, and %v for a late timer); all waits: %v",
				i+1, gap, Interval, lo, hi, timerSlack, gs)
		}
		timed = append(timed, gap)
	}
	if mid := slices.Sorted(slices.Values(timed))[len(timed)/2]; mid > hi {
		t.Fatalf("the middle wait lasted %v, want %v ±50%%; all waits: %v", mid, Interval, gs)
	}
}

// listenedBetween reports whether a subscription came up between from and
// to.
func listenedBetween(listened []time.Time, from, to time.Time) bool {
	for _, at := range listened {
		if !at.Before(from) && !at.After(to) {
			return true
		}
	}
	return false
}

// gaps lists the time from each answer to the next attempt.
func gaps(as []Attempt) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(as); i++ {
		out = append(out, as[i].Start.Sub(as[i-1].End))
	}
	return out
}
