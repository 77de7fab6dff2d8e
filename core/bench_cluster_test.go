package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
)

// clusterFloorRelease is the floor's release: compare, then delete.
var clusterFloorRelease = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`)

// BenchmarkClusterCycle: one uncontended TryObtain + Release through a
// cluster client on a three-master Redis Cluster, beside the single-node
// floor: a bare SET NX PX and the release script on one plain node.
func BenchmarkClusterCycle(b *testing.B) {
	ctx := context.Background()
	single := redistest.Start(b).Client(b)
	cc := redistest.StartCluster(b, 3).Client(b)
	l := newLocker(core.NewRedisStore(cc))
	single.Ping(ctx)
	if lk, err := l.TryObtain(ctx, "k"); err == nil { // learn the slot map outside the timings
		lk.Release(ctx)
	}

	const token = "token-0123456789abcdef"
	b.Run("floor", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := single.SetNX(ctx, "floor:{k}", token, 10*time.Second).Err(); err != nil {
				b.Fatal(err)
			}
			if err := clusterFloorRelease.Run(ctx, single, []string{"floor:{k}"}, token).Err(); err != nil {
				b.Fatal(err)
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
