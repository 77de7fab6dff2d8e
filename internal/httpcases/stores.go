package httpcases

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore"
	"github.com/reqlock/reqlock/redisstore/redlock"
)

// Backend is one open lock store for one test.
type Backend struct {
	Store core.Store
	// Vanish deletes a store key behind its holder's back, as FLUSHALL or
	// an operator would.
	Vanish func(skey string)
	// Down makes the store refuse connections for the rest of the test; nil
	// when the store cannot fail (memory).
	Down func()
	// Hang makes the store stop answering while connections stay open; nil
	// when the store cannot hang. The store is resumed at cleanup.
	Hang func()
	// Resume undoes Hang before the test ends.
	Resume func()
	// SplitVotes is set for Redlock: concurrent attempts can each win a
	// minority of the nodes, so that none gets the lock.
	SplitVotes bool
	// Client is the store's Redis, for floors measured beside it; nil for
	// the memory store.
	Client redis.UniversalClient
}

// Store is a lock store the cases run against.
type Store struct {
	Name string
	// Open returns a fresh, empty store that lives until the test ends.
	Open func(tb testing.TB) Backend
	// Shared, when set, replaces Open for the end-to-end cases: it is called
	// once per run with the test that outlives them all and returns the
	// Open each case uses. For stores that take seconds to build.
	Shared func(parent testing.TB) (open func(tb testing.TB) Backend)
	// NoBench keeps the store out of Bench: its figures are measured in core.
	NoBench bool
}

// Stores is every store the end-to-end cases and benchmarks run against.
var Stores = []Store{
	{Name: "memory", Open: func(testing.TB) Backend {
		s := memorystore.New()
		return Backend{Store: s, Vanish: s.Delete}
	}},
	{Name: "redis", Open: OpenRedis},
	{Name: "redlock", Open: OpenRedlock, NoBench: true},
	{Name: "cluster", Shared: clusterPool, NoBench: true},
}

// OpenRedis starts a redis-server for tb and returns a Redis store over it.
func OpenRedis(tb testing.TB) Backend {
	srv := redistest.Start(tb)
	c := srv.Client(tb)
	return Backend{
		Store:  redisstore.New(c),
		Client: c,
		Vanish: func(k string) { c.Del(context.Background(), k) },
		Down:   srv.Kill,
		Hang: func() {
			srv.Pause()
			tb.Cleanup(srv.Resume) // runs before the Kill that Start registered
		},
		Resume: srv.Resume,
	}
}

// OpenRedlock starts five redis-servers for tb and returns a Redlock store
// over them. Down and Hang take three of the five, a majority, away.
func OpenRedlock(tb testing.TB) Backend {
	srvs := redistest.StartN(tb, 5)
	clients := make([]redis.UniversalClient, len(srvs))
	for i, srv := range srvs {
		clients[i] = srv.Client(tb)
	}
	return Backend{
		// A node timeout that a machine loaded by parallel tests under the
		// race detector does not run past; the cases that hang the store
		// bound each attempt with StoreTimeout instead.
		Store:      redlock.New(clients...).WithNodeTimeout(time.Second),
		SplitVotes: true,
		Vanish: func(k string) {
			for _, c := range clients {
				c.Del(context.Background(), k)
			}
		},
		Down: func() {
			for _, srv := range srvs[:3] {
				srv.Kill()
			}
		},
		Hang: func() {
			for _, srv := range srvs[:3] {
				srv.Pause()
				tb.Cleanup(srv.Resume)
			}
		},
		Resume: func() {
			for _, srv := range srvs[:3] {
				srv.Resume()
			}
		},
	}
}

// clusterPool builds a few 3-master Redis Clusters up front and lends them
// to cases one at a time, emptied in between: `redis-cli --cluster create`
// takes seconds, too long to pay for every case. The clusters live as long
// as parent. Down kills every master and Hang pauses them all; a cluster
// goes back to the pool restarted (nodes.conf keeps it a cluster) or
// resumed, and healthy.
func clusterPool(parent testing.TB) func(tb testing.TB) Backend {
	n := max(2, runtime.GOMAXPROCS(0))
	pool := make(chan *redistest.Cluster, n)
	for range n {
		pool <- redistest.StartCluster(parent, 3)
	}
	return func(tb testing.TB) Backend {
		var c *redistest.Cluster
		select {
		case c = <-pool:
		case <-time.After(time.Minute):
			tb.Fatal("httpcases: no Redis Cluster free within a minute")
		}
		down, hung := false, false
		tb.Cleanup(func() { // after the client below is closed and Hang's resume
			switch {
			case down:
				c.Restart(tb)
			case hung:
				c.WaitHealthy(tb)
			}
			c.FlushAll(tb)
			pool <- c
		})
		cc := c.Client(tb)
		return Backend{
			Store:  redisstore.New(cc),
			Vanish: func(k string) { cc.Del(context.Background(), k) },
			Down: func() {
				down = true
				for _, srv := range c.Servers {
					srv.Kill()
				}
			},
			Hang: func() {
				hung = true
				for _, srv := range c.Servers {
					srv.Pause()
					tb.Cleanup(srv.Resume)
				}
			},
			Resume: func() {
				for _, srv := range c.Servers {
					srv.Resume()
				}
			},
		}
	}
}
