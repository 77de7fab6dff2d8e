package leadtest

import (
	"context"
	"log/slog"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
)

// Key is the key every instance leads.
const Key = "leadtest:leader"

// local is an instance in this process: a Locker of its own through a
// Gate to the shared store.
type local struct {
	name   string
	link   *faultproxy.Proxy // nil: no link to hold
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

// StartLinked is StartLocal for an instance whose store reaches its
// server through link, a fault proxy of its own: the Hold fault holds the
// instance's bytes there, and then delivers them late.
func (r *Run) StartLinked(name string, s store.Store, link *faultproxy.Proxy, opts ...core.Option) Instance {
	in := r.StartLocal(name, s, opts...).(*local)
	in.link = link
	return in
}

// holdLink holds what the instance sends for d, then lets it land.
func (in *local) holdLink(d time.Duration) {
	in.link.Hold(faultproxy.Upstream)
	time.Sleep(d)
	in.link.Heal()
	// The client gave up on those connections; once the held bytes went
	// through, none is left half-dead.
	time.Sleep(50 * time.Millisecond)
	in.link.Cut()
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
