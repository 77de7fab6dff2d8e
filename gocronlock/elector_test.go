package gocronlock_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-co-op/gocron/v2"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/leadtest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// Three gocron schedulers with one 1 s job each, and an Elector each on
// one Redis: the job runs about once a second in all, always on the
// leader. The leader dies (its link to Redis cut, its scheduler stopped):
// the runs go on on another instance within a lease and a tick.
func TestElectorRunsTheJobOnTheLeaderOnly(t *testing.T) {
	const ttl = time.Second
	srv := redistest.Start(t)
	type instance struct {
		gate    *leadtest.Gate
		elector *core.Elector
		sched   gocron.Scheduler
		stop    context.CancelFunc
	}
	names := []string{"a", "b", "c"}
	insts := map[string]*instance{}
	for _, n := range names {
		gate := leadtest.NewGate(redisstore.New(srv.Client(t)))
		l := core.NewLocker(gate, core.WithTTL(ttl), core.WithHolder(n), quiet)
		in := &instance{gate: gate, elector: l.Elector("scheduler")}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = in.elector.Run(ctx)
		}()
		in.stop = func() { cancel(); <-done }
		t.Cleanup(in.stop)
		insts[n] = in
	}
	leader := func() string {
		for n, in := range insts {
			if in.elector.IsLeader(context.Background()) == nil {
				return n
			}
		}
		return ""
	}
	deadline := time.Now().Add(10 * time.Second)
	for leader() == "" {
		if time.Now().After(deadline) {
			t.Fatal("no leader")
		}
		time.Sleep(10 * time.Millisecond)
	}
	first := leader()

	r := &runs{}
	start := time.Now()
	for _, n := range names {
		insts[n].sched = scheduler(t, r, n, time.Second, gocron.WithDistributedElector(insts[n].elector))
	}
	time.Sleep(8*time.Second + 200*time.Millisecond)
	got := r.since(start)
	t.Logf("%d runs in 8 s on 3 schedulers", len(got))
	if len(got) < 7 || len(got) > 9 {
		t.Errorf("%d runs in 8 s, want about 8 (not 24)", len(got))
	}
	for _, x := range got {
		if x.who != first {
			t.Fatalf("a run on %s while %s led", x.who, first)
		}
	}

	// The leader dies: nothing more reaches Redis from it, its lock stays
	// until its lease runs out.
	in := insts[first]
	in.gate.Cut()
	_ = in.sched.Shutdown()
	in.stop()
	died := time.Now()
	deadline = died.Add(ttl + 5*time.Second)
	for len(r.since(died)) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	after := r.since(died)
	if len(after) == 0 {
		t.Fatal("no run after the leader died")
	}
	gap := after[0].at.Sub(died)
	t.Logf("first run after the leader died: %v later, on %s", gap, after[0].who)
	// A lease for the lock to run out, a tick for the next run, and room
	// for a loaded machine.
	if gap > ttl+time.Second+500*time.Millisecond {
		t.Errorf("runs resumed %v after the leader died, want within TTL + 1 s", gap)
	}
	if after[0].who == first {
		t.Errorf("a run on the dead leader %s", first)
	}
}
