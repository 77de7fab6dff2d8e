package gocronlock_test

import (
	"context"
	"testing"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/gocronlock"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore"
)

// startCron starts a robfig cron running job every second under wrap; it
// is stopped when the test ends.
func startCron(t *testing.T, wrap cron.JobWrapper, job func()) {
	c := cron.New(cron.WithChain(wrap))
	if _, err := c.AddFunc("@every 1s", job); err != nil {
		t.Fatal(err)
	}
	c.Start()
	t.Cleanup(func() { <-c.Stop().Done() })
}

// Three crons 300 ms apart, each job wrapped in CronLock with
// HoldAtLeast: each tick runs once.
func TestCronLockRunsEachTickOnce(t *testing.T) {
	const ticks = 3
	srv := redistest.Start(t)
	r := &runs{}
	// robfig's @every fires on whole seconds: start half a second before
	// one, so that every firing falls mid-tick, far from the edges the
	// count uses.
	start := time.Now().Truncate(time.Second).Add(1500 * time.Millisecond)
	time.Sleep(time.Until(start))
	for i, n := range []string{"a", "b", "c"} {
		time.Sleep(time.Until(start.Add(time.Duration(i) * 300 * time.Millisecond)))
		l := core.NewLocker(redisstore.New(srv.Client(t)), core.WithHolder(n), quiet)
		startCron(t, gocronlock.CronLock(l, "report", gocronlock.HoldAtLeast(800*time.Millisecond)), r.job(n))
	}
	time.Sleep(time.Until(start.Add(ticks*time.Second + 900*time.Millisecond)))
	n := perTick(r.since(start), start, time.Second)
	t.Logf("runs per tick: %v", n)
	for tick := 1; tick <= ticks; tick++ {
		if n[tick] != 1 {
			t.Errorf("tick %d ran %d times, want once", tick, n[tick])
		}
	}
}

// Three crons with CronLeaderOnly: only the leader's runs.
func TestCronLeaderOnlyRunsOnTheLeader(t *testing.T) {
	srv := redistest.Start(t)
	r := &runs{}
	var electors []*core.Elector
	for _, n := range []string{"a", "b", "c"} {
		l := core.NewLocker(redisstore.New(srv.Client(t)), core.WithHolder(n), quiet)
		e := l.Elector("cron")
		electors = append(electors, e)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = e.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		startCron(t, gocronlock.CronLeaderOnly(e), r.job(n))
	}
	start := time.Now()
	time.Sleep(3*time.Second + 500*time.Millisecond)
	rs := r.since(start)
	if len(rs) < 2 || len(rs) > 4 {
		t.Fatalf("%d runs in 3.5 s on 3 crons, want about 3", len(rs))
	}
	h, err := electors[0].Leader(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range rs {
		if x.who != h.Holder {
			t.Fatalf("a run on %s while %s led", x.who, h.Holder)
		}
	}
}

func TestWrappersRefuseBadInput(t *testing.T) {
	l := core.NewLocker(memorystore.New())
	for name, f := range map[string]func(){
		"NewLocker nil":      func() { gocronlock.NewLocker(nil) },
		"CronLock nil":       func() { gocronlock.CronLock(nil, "k") },
		"CronLock empty key": func() { gocronlock.CronLock(l, "") },
		"CronLeaderOnly nil": func() { gocronlock.CronLeaderOnly(nil) },
		"HoldAtLeast < 0":    func() { gocronlock.HoldAtLeast(-time.Second) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
