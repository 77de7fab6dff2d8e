package leadtest

import (
	"context"
	"log/slog"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
)

// Key begins the key every instance of a run leads; the test's name
// follows, so that runs on one server do not meet.
const Key = "leadtest:leader"

// local is an instance in this process: a Locker of its own, either
// through a Gate to the shared store, or over links of its own (fault
// proxies) to the store's servers.
type local struct {
	name   string
	links  []*faultproxy.Proxy // none: its store is behind gate
	gate   *Gate
	cancel context.CancelFunc
	done   chan struct{}
}

// StartLocal starts an instance named name in this process, leading r.Key on
// s through a Gate with leases of the run's TTL; it stops when the test
// ends. Killed, it is cut off at the gate; paused, its calls are stalled;
// its link held, its calls are held at the gate and land late.
func (r *Run) StartLocal(name string, s store.Store, opts ...core.Option) Instance {
	in := &local{name: name, gate: NewGate(s)}
	r.start(in, in.gate, opts)
	return in
}

// StartLinked starts an instance in this process whose store s reaches its
// servers through links, fault proxies of its own, and only through them:
// the Hold fault holds the instance's bytes there, and then delivers them
// late. s is used as it is (no Gate), so that a store that keeps lines
// keeps them. Killed, its links refuse and cut every connection first.
func (r *Run) StartLinked(name string, s store.Store, links []*faultproxy.Proxy, opts ...core.Option) Instance {
	if len(links) == 0 {
		r.t.Fatalf("leadtest: %s has no link", name)
	}
	in := &local{name: name, links: links}
	r.start(in, s, opts)
	return in
}

func (r *Run) start(in *local, s store.Store, opts []core.Option) {
	in.done = make(chan struct{})
	l := core.NewLocker(s, append([]core.Option{core.WithTTL(r.TTL), core.WithHolder(in.name), quiet}, opts...)...)
	ctx, cancel := context.WithCancel(context.Background())
	in.cancel = cancel
	go func() {
		defer close(in.done)
		_ = l.Lead(ctx, r.Key, Work(in.name, r.Reg, r.Add))
	}()
	r.t.Cleanup(func() {
		cancel()
		if in.gate != nil {
			in.gate.Open()
		}
		for _, p := range in.links {
			p.Heal()
		}
		<-in.done
	})
}

// holdLink holds what the instance sends for d, then lets it land.
func (in *local) holdLink(d time.Duration) {
	if in.gate != nil {
		in.gate.Hold()
		time.Sleep(d)
		in.gate.Open()
		return
	}
	for _, p := range in.links {
		p.Hold(faultproxy.Upstream)
	}
	time.Sleep(d)
	for _, p := range in.links {
		p.Heal()
	}
	// The client gave up on those connections; once the held bytes went
	// through, none is left half-dead.
	time.Sleep(50 * time.Millisecond)
	for _, p := range in.links {
		p.Cut()
	}
}

func (in *local) Name() string { return in.name }

// Kill cuts the instance off the store first, so that its resignation
// never lands, then ends its Lead.
func (in *local) Kill() {
	if in.gate != nil {
		in.gate.Cut()
	}
	for _, p := range in.links {
		p.Refuse(true)
		p.Cut()
	}
	in.cancel()
}

// Pause stalls the instance's store calls for d. Its fn goes on running:
// it must stop acting when its lease runs out by its own clock. An
// instance over links stops reading its replies instead.
func (in *local) Pause(d time.Duration) {
	if in.gate == nil {
		for _, p := range in.links {
			p.Hold(faultproxy.Downstream)
		}
		time.Sleep(d)
		for _, p := range in.links {
			p.Heal()
		}
		return
	}
	in.gate.Stall()
	time.Sleep(d)
	in.gate.Open()
}

// quiet drops the Locker's log lines: the scenarios lose locks on purpose.
var quiet = core.WithLogger(slog.New(slog.DiscardHandler))
