package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// runElector runs e in the background until the test ends, or until the
// returned cancel.
func runElector(t *testing.T, e *core.Elector) (cancel func()) {
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	var once bool
	cancel = func() {
		if once {
			return
		}
		once = true
		stop()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v, want context.Canceled", err)
		}
	}
	t.Cleanup(cancel)
	return cancel
}

// leaders returns the electors among es that say they lead.
func leaders(es ...*core.Elector) []*core.Elector {
	var out []*core.Elector
	for _, e := range es {
		if e.IsLeader(context.Background()) == nil {
			out = append(out, e)
		}
	}
	return out
}

func TestElectorOneLeaderAndItsHandOver(t *testing.T) {
	s := memorystore.New()
	names := []string{"a", "b", "c"}
	es := make([]*core.Elector, len(names))
	stops := make(map[*core.Elector]func(), len(names))
	label := make(map[*core.Elector]string, len(names))
	for i, n := range names {
		es[i] = leadLocker(s, core.WithHolder(n)).Elector("scheduler")
		stops[es[i]] = runElector(t, es[i])
		label[es[i]] = n
	}
	within(t, 5*time.Second, "a leader", func() bool { return len(leaders(es...)) == 1 })
	first := leaders(es...)[0]
	term := first.Term()
	if term == 0 {
		t.Fatal("the leader's term is 0")
	}
	for _, e := range es {
		if e != first && (e.Term() != 0 || e.IsLeader(context.Background()) == nil) {
			t.Fatalf("a follower says term %d, IsLeader %v", e.Term(), e.IsLeader(context.Background()))
		}
		if err := e.IsLeader(context.Background()); e != first && !errors.Is(err, core.ErrNotLeader) {
			t.Fatalf("a follower's IsLeader = %v, want ErrNotLeader", err)
		}
	}
	// Every instance can say who leads, the leader included.
	for _, e := range es {
		h, err := e.Leader(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !h.Held || h.Holder != label[first] || h.Fence != term {
			t.Fatalf("Leader = %+v, want held by %q in term %d", h, label[first], term)
		}
	}

	// The leader stops: another takes over in a greater term, and never
	// two at once.
	stops[first]()
	if first.IsLeader(context.Background()) == nil || first.Term() != 0 {
		t.Fatal("an Elector whose Run returned still leads")
	}
	rest := make([]*core.Elector, 0, 2)
	for _, e := range es {
		if e != first {
			rest = append(rest, e)
		}
	}
	within(t, 5*time.Second, "a new leader", func() bool {
		n := len(leaders(rest...))
		if n > 1 {
			t.Fatal("two leaders at once")
		}
		return n == 1
	})
	if next := leaders(rest...)[0].Term(); next <= term {
		t.Fatalf("new term %d, not above %d", next, term)
	}
}

func TestElectorRunTwiceIsRefused(t *testing.T) {
	e := leadLocker(memorystore.New()).Elector("k")
	runElector(t, e)
	within(t, 5*time.Second, "leading", func() bool { return e.IsLeader(context.Background()) == nil })
	if err := e.Run(context.Background()); !errors.Is(err, core.ErrElectorRunning) {
		t.Fatalf("second Run = %v, want ErrElectorRunning", err)
	}
}

func TestElectorBeforeRunIsNotLeader(t *testing.T) {
	e := leadLocker(memorystore.New()).Elector("k")
	if err := e.IsLeader(context.Background()); !errors.Is(err, core.ErrNotLeader) {
		t.Fatalf("IsLeader before Run = %v", err)
	}
	if h, err := e.Leader(context.Background()); err != nil || h.Held {
		t.Fatalf("Leader before anyone ran = %+v, %v", h, err)
	}
	if err := leadLocker(memorystore.New()).Elector("").Run(context.Background()); !errors.Is(err, core.ErrEmptyKey) {
		t.Fatalf("Run with an empty key = %v, want ErrEmptyKey", err)
	}
}
