package leadtest

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

// Calls counts the calls a Locker makes to its store: what a leader's
// steady state costs is read from it.
type Calls struct {
	core.Store
	Acquires, Extends, Releases, TTLs atomic.Int64
}

// Acquire counts and forwards.
func (c *Calls) Acquire(ctx context.Context, l store.Lease) (store.Grant, error) {
	c.Acquires.Add(1)
	return c.Store.Acquire(ctx, l)
}

// Extend counts and forwards.
func (c *Calls) Extend(ctx context.Context, ls []store.Lease) []store.Renewal {
	c.Extends.Add(1)
	return c.Store.Extend(ctx, ls)
}

// Release counts and forwards.
func (c *Calls) Release(ctx context.Context, key, token string) error {
	c.Releases.Add(1)
	return c.Store.Release(ctx, key, token)
}

// TTL counts and forwards.
func (c *Calls) TTL(ctx context.Context, key, token string) (time.Duration, error) {
	c.TTLs.Add(1)
	return c.Store.TTL(ctx, key, token)
}

// Total is every call counted.
func (c *Calls) Total() int64 {
	return c.Acquires.Load() + c.Extends.Load() + c.Releases.Load() + c.TTLs.Load()
}
