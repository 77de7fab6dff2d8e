package rpccases

import (
	"context"
	"log/slog"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore"
)

// Quiet drops the engine's and the Locker's logs: the cases check codes.
var Quiet = slog.New(slog.DiscardHandler)

// Backend is one fresh store for one case.
type Backend struct {
	Locker *core.Locker
	// Down makes the store unreachable for the rest of the test; nil for
	// the memory store, which cannot fail.
	Down func()
	// Keys lists every key in the store; nil for the memory store.
	Keys func(ctx context.Context) ([]string, error)
}

// Store is a lock store the cases run on.
type Store struct {
	Name string
	Open func(t testing.TB) Backend
}

// Stores are the memory store and a real Redis.
var Stores = []Store{
	{Name: "memory", Open: func(testing.TB) Backend {
		return Backend{Locker: core.NewLocker(memorystore.New(), core.WithLogger(Quiet))}
	}},
	{Name: "redis", Open: func(t testing.TB) Backend {
		srv := redistest.Start(t)
		c := srv.Client(t)
		return Backend{
			Locker: core.NewLocker(redisstore.New(c), core.WithLogger(Quiet)),
			Down:   srv.Kill,
			Keys:   func(ctx context.Context) ([]string, error) { return c.Keys(ctx, "*").Result() },
		}
	}},
}
