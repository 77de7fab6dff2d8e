package leadtest

import (
	"context"
	"log/slog"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

// Key is the key every instance leads.
const Key = "leadtest:leader"

// local is an instance in this process: a Locker of its own through a
// Gate to the shared store.
type local struct {
	name   string
	gate   *Gate
	cancel context.CancelFunc
	done   chan struct{}
}

// StartLocal starts an instance named name in this process, leading Key on
// s with leases of the run's TTL; it stops when the test ends.
func (r *Run) StartLocal(name string, s store.Store, opts ...core.Option) Instance {
	in := &local{name: name, gate: NewGate(s), done: make(chan struct{})}
	l := core.NewLocker(in.gate, append([]core.Option{core.WithTTL(r.TTL), core.WithHolder(name), quiet}, opts...)...)
	ctx, cancel := context.WithCancel(context.Background())
	in.cancel = cancel
	go func() {
		defer close(in.done)
		_ = l.Lead(ctx, Key, Work(name, r.Reg, r.Add))
	}()
	r.t.Cleanup(func() {
		cancel()
		in.gate.Open()
		<-in.done
	})
	return in
}

func (in *local) Name() string { return in.name }

// Kill cuts the instance off the store first, so that its resignation
// never lands, then ends its Lead.
func (in *local) Kill() {
	in.gate.Cut()
	in.cancel()
}

// Pause stalls the instance's store calls for d. Its fn goes on running:
// it must stop acting when its lease runs out by its own clock.
func (in *local) Pause(d time.Duration) {
	in.gate.Stall()
	time.Sleep(d)
	in.gate.Open()
}

// quiet drops the Locker's log lines: the scenarios lose locks on purpose.
var quiet = core.WithLogger(slog.New(slog.DiscardHandler))
