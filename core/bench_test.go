package core_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
)

// floorRelease is the least a correct release can do: compare, then delete.
var floorRelease = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`)

// floorCycle is the floor every Redis figure is read against: a bare
// SET NX PX and a scripted release, on the same client and server.
func floorCycle(ctx context.Context, b *testing.B, c redis.UniversalClient, key string) {
	ok, err := c.SetNX(ctx, key, "token-0123456789abcdef", 10*time.Second).Result()
	if err != nil || !ok {
		b.Fatalf("floor SET NX: %v %v", ok, err)
	}
	if err := floorRelease.Run(ctx, c, []string{key}, "token-0123456789abcdef").Err(); err != nil {
		b.Fatal(err)
	}
}

func lockCycle(ctx context.Context, b *testing.B, l *core.Locker, key string) {
	lk, err := l.TryObtain(ctx, key)
	if err != nil {
		b.Fatal(err)
	}
	if err := lk.Release(ctx); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCycle: one uncontended TryObtain + Release, beside the floor.
// Read reqlock/x against floor/x from the same run.
func BenchmarkCycle(b *testing.B) {
	ctx := context.Background()
	c := redistest.Start(b).Client(b)
	l := newLocker(core.NewRedisStore(c))
	c.Ping(ctx) // connect and load nothing into the timings

	b.Run("redis/sequential/floor", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			floorCycle(ctx, b, c, "floor:{k}")
		}
	})
	b.Run("redis/sequential/reqlock", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			lockCycle(ctx, b, l, "k")
		}
	})
	var n atomic.Int64
	b.Run("redis/parallel/floor", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			key := fmt.Sprintf("floor:{p%d}", n.Add(1))
			for pb.Next() {
				floorCycle(ctx, b, c, key)
			}
		})
	})
	b.Run("redis/parallel/reqlock", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			key := fmt.Sprint("p", n.Add(1))
			for pb.Next() {
				lockCycle(ctx, b, l, key)
			}
		})
	})

	// The memory store's floor is a mutex-guarded map doing the same work
	// without tokens, leases or fences.
	var mu sync.Mutex
	m := map[string]string{}
	b.Run("memory/sequential/floor", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			mu.Lock()
			m["k"] = "token"
			mu.Unlock()
			mu.Lock()
			delete(m, "k")
			mu.Unlock()
		}
	})
	ml := newLocker(core.NewMemoryStore())
	b.Run("memory/sequential/reqlock", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			lockCycle(ctx, b, ml, "k")
		}
	})
	b.Run("memory/parallel/reqlock", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			key := fmt.Sprint("p", n.Add(1))
			for pb.Next() {
				lockCycle(ctx, b, ml, key)
			}
		})
	})
}
