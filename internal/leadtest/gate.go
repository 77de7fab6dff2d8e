package leadtest

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/reqlock/reqlock/core/store"
)

// Gate is a store as one instance reaches it: open, stalled (each call
// waits until the gate opens again or its context ends, as it would
// behind a stopped process or a link that drops everything), held (as
// stalled, but a call whose caller gave up still reaches the store once
// the gate opens, as bytes held on a link land late) or cut (each call
// fails at once, as for a process that is gone).
type Gate struct {
	store.Store

	mu     sync.Mutex
	cut    bool
	late   bool          // held: calls land after their callers gave up
	opened chan struct{} // nil while open; closed when a stall ends
}

// NewGate returns an open gate to s.
func NewGate(s store.Store) *Gate { return &Gate{Store: s} }

var errCut = errors.New("leadtest: the instance is cut off from the store")

// Stall holds every call from now until Open.
func (g *Gate) Stall() { g.close(false) }

// Hold holds every call from now until Open, and delivers each then, even
// one whose caller gave up meanwhile.
func (g *Gate) Hold() { g.close(true) }

func (g *Gate) close(late bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.opened == nil {
		g.opened = make(chan struct{})
	}
	g.late = late
}

// Open lets calls through again, those held first.
func (g *Gate) Open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.opened != nil {
		close(g.opened)
		g.opened = nil
	}
	g.late = false
}

// Cut fails every call from now on, for good; held calls fail too.
func (g *Gate) Cut() {
	g.mu.Lock()
	g.cut = true
	g.mu.Unlock()
	g.Open()
}

func (g *Gate) isCut() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cut
}

// through makes call as the gate lets it: at once, after the gate opens,
// or not at all (fail with why).
func through[T any](g *Gate, ctx context.Context, call func(context.Context) T, fail func(error) T) T {
	g.mu.Lock()
	opened, late := g.opened, g.late
	g.mu.Unlock()
	if opened == nil {
		if g.isCut() {
			return fail(errCut)
		}
		return call(ctx)
	}
	if !late {
		select {
		case <-opened:
		case <-ctx.Done():
			return fail(ctx.Err())
		}
		if g.isCut() {
			return fail(errCut)
		}
		return call(ctx)
	}
	// Held: the call lands once the gate opens, whatever became of its
	// caller meanwhile.
	landed := make(chan T, 1)
	go func() {
		<-opened
		if g.isCut() {
			landed <- fail(errCut)
			return
		}
		landed <- call(context.WithoutCancel(ctx))
	}()
	select {
	case v := <-landed:
		return v
	case <-ctx.Done():
		return fail(ctx.Err())
	}
}

type grantOrErr struct {
	g   store.Grant
	err error
}

type ttlOrErr struct {
	d   time.Duration
	err error
}

func (g *Gate) Acquire(ctx context.Context, l store.Lease) (store.Grant, error) {
	r := through(g, ctx, func(ctx context.Context) grantOrErr {
		gr, err := g.Store.Acquire(ctx, l)
		return grantOrErr{gr, err}
	}, func(err error) grantOrErr { return grantOrErr{err: err} })
	return r.g, r.err
}

func (g *Gate) Extend(ctx context.Context, leases []store.Lease) []store.Renewal {
	return through(g, ctx, func(ctx context.Context) []store.Renewal {
		return g.Store.Extend(ctx, leases)
	}, func(err error) []store.Renewal {
		out := make([]store.Renewal, len(leases))
		for i := range out {
			out[i].Err = err
		}
		return out
	})
}

func (g *Gate) Release(ctx context.Context, key, token string) error {
	return through(g, ctx, func(ctx context.Context) error {
		return g.Store.Release(ctx, key, token)
	}, func(err error) error { return err })
}

func (g *Gate) TTL(ctx context.Context, key, token string) (time.Duration, error) {
	r := through(g, ctx, func(ctx context.Context) ttlOrErr {
		d, err := g.Store.TTL(ctx, key, token)
		return ttlOrErr{d, err}
	}, func(err error) ttlOrErr { return ttlOrErr{err: err} })
	return r.d, r.err
}
