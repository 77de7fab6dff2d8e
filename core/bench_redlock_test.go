package core

// An internal test file, so that the Redlock floor can fan out through the
// store's own fanOut: the floor then differs from the store only in what
// each node is asked and in what the store does around it.

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/internal/redistest"
)

// compareAndDelete is the floor's release: the least a correct release can
// do, one script.
var compareAndDelete = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`)

const floorToken = "token-0123456789abcdef"

// BenchmarkRedlockCycle: one uncontended TryObtain + Release on five
// masters, beside the parallel five-node floor: a bare SET NX PX to all five
// at once, then the compare-and-delete script to all five at once, through
// the same fan-out (one goroutine per node, the same node timeout). Read
// reqlock against floor from the same run; on two cores five servers make
// the floor itself several times the single-node one.
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

	b.Run("floor", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			errs := fanOut(ctx, store.nodes, DefaultNodeTimeout,
				func(ctx context.Context, n *RedisStore) error {
					return n.c.SetNX(ctx, "floor:{k}", floorToken, 10*time.Second).Err()
				},
				func(err error) error { return err })
			errs = append(errs, fanOut(ctx, store.nodes, DefaultNodeTimeout,
				func(ctx context.Context, n *RedisStore) error {
					return compareAndDelete.Run(ctx, n.c, []string{"floor:{k}"}, floorToken).Err()
				},
				func(err error) error { return err })...)
			for _, err := range errs {
				if err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("reqlock", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			lk, err := l.TryObtain(ctx, "k")
			if err != nil {
				b.Fatal(err)
			}
			if err := lk.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
