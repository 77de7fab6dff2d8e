package gocronlock_test

import (
	"testing"
	"time"

	"github.com/go-co-op/gocron/v2"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/gocronlock"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// perTick counts runs by the tick they belong to: the whole intervals
// since the first scheduler started.
func perTick(rs []run, start time.Time, interval time.Duration) map[int]int {
	n := map[int]int{}
	for _, x := range rs {
		n[int(x.at.Sub(start)/interval)]++
	}
	return n
}

// staggered starts three schedulers 300 ms apart, each with a Locker of
// its own on one Redis and one job every second, lets them run for ticks
// seconds and returns the runs and when the first started.
func staggered(t *testing.T, ticks int, opts ...gocronlock.Option) ([]run, time.Time) {
	srv := redistest.Start(t)
	r := &runs{}
	start := time.Now()
	for i, n := range []string{"a", "b", "c"} {
		time.Sleep(time.Until(start.Add(time.Duration(i) * 300 * time.Millisecond)))
		l := core.NewLocker(redisstore.New(srv.Client(t)), core.WithHolder(n), quiet)
		scheduler(t, r, n, time.Second, gocron.WithDistributedLocker(gocronlock.NewLocker(l, opts...)))
	}
	time.Sleep(time.Until(start.Add(time.Duration(ticks)*time.Second + 900*time.Millisecond)))
	return r.since(start), start
}

// With HoldAtLeast below the interval, each tick runs once, whichever
// instance's timer fires first.
func TestHoldAtLeastRunsEachTickOnce(t *testing.T) {
	const ticks = 5
	rs, start := staggered(t, ticks, gocronlock.HoldAtLeast(800*time.Millisecond))
	n := perTick(rs, start, time.Second)
	t.Logf("runs per tick: %v", n)
	for tick := 1; tick <= ticks; tick++ {
		if n[tick] != 1 {
			t.Errorf("tick %d ran %d times, want once", tick, n[tick])
		}
	}
}

// Without it the first run frees the lock before the later timers fire,
// and a tick runs on several instances: what HoldAtLeast is for.
func TestWithoutHoldAtLeastATickRunsMoreThanOnce(t *testing.T) {
	const ticks = 3
	rs, start := staggered(t, ticks)
	n := perTick(rs, start, time.Second)
	t.Logf("runs per tick: %v", n)
	twice := 0
	for tick := 1; tick <= ticks; tick++ {
		if n[tick] > 1 {
			twice++
		}
	}
	if twice == 0 {
		t.Fatal("every tick ran once without HoldAtLeast: the test above proves nothing")
	}
}
