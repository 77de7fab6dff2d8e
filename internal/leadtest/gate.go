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
// behind a stopped process or a link that drops everything) or cut (each
// call fails at once, as for a process that is gone).
type Gate struct {
	store.Store

	mu     sync.Mutex
	cut    bool
	opened chan struct{} // nil while open; closed when a stall ends
}

// NewGate returns an open gate to s.
func NewGate(s store.Store) *Gate { return &Gate{Store: s} }

var errCut = errors.New("leadtest: the instance is cut off from the store")

// Stall holds every call from now until Open.
func (g *Gate) Stall() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.opened == nil {
		g.opened = make(chan struct{})
	}
}

// Open lets calls through again, those held first.
func (g *Gate) Open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.opened != nil {
		close(g.opened)
		g.opened = nil
	}
}

// Cut fails every call from now on, for good; held calls fail too.
func (g *Gate) Cut() {
	g.mu.Lock()
	g.cut = true
	g.mu.Unlock()
	g.Open()
}

func (g *Gate) pass(ctx context.Context) error {
	g.mu.Lock()
	cut, opened := g.cut, g.opened
	g.mu.Unlock()
	if opened != nil {
		select {
		case <-opened:
		case <-ctx.Done():
			return ctx.Err()
		}
		g.mu.Lock()
		cut = g.cut
		g.mu.Unlock()
	}
	if cut {
		return errCut
	}
	return nil
}

func (g *Gate) Acquire(ctx context.Context, l store.Lease) (store.Grant, error) {
	if err := g.pass(ctx); err != nil {
		return store.Grant{}, err
	}
	return g.Store.Acquire(ctx, l)
}

func (g *Gate) Extend(ctx context.Context, leases []store.Lease) []store.Renewal {
	if err := g.pass(ctx); err != nil {
		out := make([]store.Renewal, len(leases))
		for i := range out {
			out[i].Err = err
		}
		return out
	}
	return g.Store.Extend(ctx, leases)
}

func (g *Gate) Release(ctx context.Context, key, token string) error {
	if err := g.pass(ctx); err != nil {
		return err
	}
	return g.Store.Release(ctx, key, token)
}

func (g *Gate) TTL(ctx context.Context, key, token string) (time.Duration, error) {
	if err := g.pass(ctx); err != nil {
		return 0, err
	}
	return g.Store.TTL(ctx, key, token)
}
