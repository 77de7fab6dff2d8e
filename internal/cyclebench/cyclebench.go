// Package cyclebench holds the cycles the Redis cycle benchmarks time
// (core's BenchmarkCycle, the Redis store's BenchmarkClusterCycle): one
// uncontended TryObtain + Release of reqlock beside its floors, on the
// same client and server. One definition, shared by the benchmarks of
// core and of the Redis store.
package cyclebench

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/benchratio"
	"github.com/reqlock/reqlock/internal/redisfloor"
)

// Floor is one cycle of a floor: acquire (redisfloor.SetNX or
// redisfloor.ScriptedSetNX), then the scripted release, on the same client
// and server as reqlock's.
func Floor(ctx context.Context, b *testing.B, c redis.UniversalClient, acquire func(context.Context, redis.UniversalClient, string) error, key string) {
	if err := acquire(ctx, c, key); err != nil {
		b.Fatalf("floor acquire: %v", err)
	}
	if err := redisfloor.Release(ctx, c, key); err != nil {
		b.Fatalf("floor release: %v", err)
	}
}

// Lock is one cycle of l: TryObtain, then Release.
func Lock(ctx context.Context, b *testing.B, l *core.Locker, key string) {
	lk, err := l.TryObtain(ctx, key)
	if err != nil {
		b.Fatal(err)
	}
	if err := lk.Release(ctx); err != nil {
		b.Fatal(err)
	}
}

// FloorKey is the floors' key beside l's lock on id: it shares the lock's
// hash tag, so that on a Cluster node it is served by the master that
// serves the lock.
func FloorKey(b *testing.B, l *core.Locker, id string) string {
	lockKey, err := l.StoreKey(id)
	if err != nil {
		b.Fatal(err)
	}
	return "floor:" + lockKey[strings.IndexByte(lockKey, '{'):]
}

// Cycles is the floor and the scripted floor (both on c) and l's cycle,
// each on a key of its own named by id. b is the benchmark that runs them.
func Cycles(ctx context.Context, b *testing.B, c redis.UniversalClient, l *core.Locker, id string) []benchratio.Cycle {
	floorKey := FloorKey(b, l, id)
	return []benchratio.Cycle{
		{Name: "floor", Run: func() { Floor(ctx, b, c, redisfloor.SetNX, floorKey) }},
		{Name: "scripted-floor", Run: func() { Floor(ctx, b, c, redisfloor.ScriptedSetNX, floorKey) }},
		{Name: "reqlock", Run: func() { Lock(ctx, b, l, id) }},
	}
}
