package httpcases

import (
	"context"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
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
}

// Store is a lock store the cases run against.
type Store struct {
	Name string
	// Open returns a fresh, empty store that lives until the test ends.
	Open func(tb testing.TB) Backend
}

// Stores is every store the end-to-end cases and benchmarks run against.
// Test files that add stores (Redlock, Cluster) append to it in an init.
var Stores = []Store{
	{Name: "memory", Open: func(testing.TB) Backend {
		s := core.NewMemoryStore()
		return Backend{Store: s, Vanish: s.Delete}
	}},
	{Name: "redis", Open: OpenRedis},
}

// OpenRedis starts a redis-server for tb and returns a RedisStore over it.
func OpenRedis(tb testing.TB) Backend {
	srv := redistest.Start(tb)
	c := srv.Client(tb)
	return Backend{
		Store:  core.NewRedisStore(c),
		Vanish: func(k string) { c.Del(context.Background(), k) },
		Down:   srv.Kill,
		Hang: func() {
			srv.Pause()
			tb.Cleanup(srv.Resume) // runs before the Kill that Start registered
		},
	}
}
