package leadtest

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
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

// Cost leads key on a Locker over leader's store, its calls counted,
// with followers Lockers (each on a store from follower) campaigning
// beside it, and returns the leader's store calls, and its renewals among
// them, in window once it leads. A follower that leads meanwhile fails tb.
func Cost(tb testing.TB, leader core.Store, follower func() core.Store, key string, ttl, window time.Duration, followers int) (calls, extends int64) {
	quiet := core.WithLogger(slog.New(slog.DiscardHandler))
	counted := &Calls{Store: leader}
	l := core.NewLocker(counted, quiet, core.WithTTL(ttl))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	leading := make(chan struct{})
	wg.Go(func() {
		_ = l.Lead(ctx, key, func(ctx context.Context) error {
			close(leading)
			<-ctx.Done()
			return nil
		})
	})
	<-leading
	for range followers {
		f := core.NewLocker(follower(), quiet, core.WithTTL(ttl))
		wg.Go(func() {
			_ = f.Lead(ctx, key, func(context.Context) error {
				tb.Error("a follower led while the leader was alive")
				return nil
			})
		})
	}
	c0, e0 := counted.Total(), counted.Extends.Load()
	time.Sleep(window)
	return counted.Total() - c0, counted.Extends.Load() - e0
}
