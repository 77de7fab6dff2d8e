package core

// An internal test file, so that the Redlock floor can fan out through the
// store's own fanOut: the floor then differs from the store only in what
// each node is asked and in what the store does around it.

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/internal/benchratio"
	"github.com/reqlock/reqlock/internal/redistest"
)

// BenchmarkRedlockCycle: one uncontended TryObtain + Release on five
// masters, beside the parallel five-node floor: a bare SET NX PX to all five
// at once, then the compare-and-delete script to all five at once, through
// the same fan-out (one goroutine per node, the same node timeout). Read
// reqlock against floor (and scripted-floor: SET NX PX sent as a script)
// from the same run; on two cores five servers make the floor itself several
// times the single-node one. There is no interleaved ratio line here: the
// store answers once a quorum has, and the two slower nodes' calls would
// then run on into the floor's timing and flatter reqlock.
func BenchmarkRedlockCycle(b *testing.B) {
	ctx := context.Background()
	servers := redistest.StartN(b, 5)
	clients := make([]redis.UniversalClient, len(servers))
	for i, s := range servers {
		clients[i] = s.Client(b)
		clients[i].Ping(ctx) // connect outside the timings
	}
	store := NewRedlockStore(clients...)
	l := NewLocker(store, WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))

	// fanOutFloor is one floor cycle: acquire on all five nodes at once,
	// then the release on all five at once.
	fanOutFloor := func(b *testing.B, acquire func(context.Context, redis.UniversalClient, string) error) func() {
		return func() {
			errs := fanOut(ctx, store.nodes, DefaultNodeTimeout,
				func(ctx context.Context, n *RedisStore) error { return acquire(ctx, n.c, "floor:{k}") },
				func(err error) error { return err })
			errs = append(errs, fanOut(ctx, store.nodes, DefaultNodeTimeout,
				func(ctx context.Context, n *RedisStore) error { return FloorRelease(ctx, n.c, "floor:{k}") },
				func(err error) error { return err })...)
			for _, err := range errs {
				if err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	benchratio.Each(b, "", func(b *testing.B) []benchratio.Cycle {
		return []benchratio.Cycle{
			{Name: "floor", Run: fanOutFloor(b, FloorSetNX)},
			{Name: "scripted-floor", Run: fanOutFloor(b, FloorScriptedSetNX)},
			{Name: "reqlock", Run: func() {
				lk, err := l.TryObtain(ctx, "k")
				if err != nil {
					b.Fatal(err)
				}
				if err := lk.Release(ctx); err != nil {
					b.Fatal(err)
				}
			}},
		}
	})
}
