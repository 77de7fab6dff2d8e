package core_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/internal/benchratio"
	"github.com/reqlock/reqlock/internal/cyclebench"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore"
)

// BenchmarkCycle: one uncontended TryObtain + Release, beside the floor
// and the scripted floor. Read reqlock/x against floor/x (and
// scripted-floor/x) from the same run; redis/sequential/ratio times all
// three interleaved and reports the ratios directly.
func BenchmarkCycle(b *testing.B) {
	ctx := context.Background()
	srv := redistest.Start(b)
	c := srv.Client(b)
	l := newLocker(redisstore.New(c))
	c.Ping(ctx) // connect and load nothing into the timings
	on := func(id string) func(*testing.B) []benchratio.Cycle {
		return func(b *testing.B) []benchratio.Cycle { return cyclebench.Cycles(ctx, b, c, l, id) }
	}

	benchratio.Each(b, "redis/sequential/", on("k"))
	b.Run("redis/sequential/ratio", func(b *testing.B) {
		cy := on("k")(b)
		benchratio.Ratios(b, cy...)
		reportServerTime(b, c, cy[0].Run, cy[2].Run)
	})

	// The twin: the client a user makes from the README's first Redis
	// example, go-redis's defaults (MaxRetries 3 among them) plus what the
	// README asks to set. The test helpers' client (MaxRetries -1) never
	// resends; this one may, and the store must not make every release pay
	// for that.
	readme := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
	b.Cleanup(func() { _ = readme.Close() })
	readme.Ping(ctx)
	rl := newLocker(redisstore.New(readme))
	b.Run("redis/readme/ratio", func(b *testing.B) {
		cy := cyclebench.Cycles(ctx, b, readme, rl, "r")
		benchratio.Ratios(b, cy...)
		reportServerTime(b, readme, cy[0].Run, cy[2].Run)
	})
	b.Run("redis/readme/reqlock", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			cyclebench.Lock(ctx, b, rl, "r")
		}
	})
	var n atomic.Int64
	for i, cy := range on("k")(b) {
		b.Run("redis/parallel/"+cy.Name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				run := on(fmt.Sprint("p", n.Add(1)))(b)[i].Run
				for pb.Next() {
					run()
				}
			})
		})
	}

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
	ml := newLocker(memorystore.New())
	b.Run("memory/sequential/reqlock", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			cyclebench.Lock(ctx, b, ml, "k")
		}
	})
	b.Run("memory/parallel/reqlock", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			key := fmt.Sprint("p", n.Add(1))
			for pb.Next() {
				cyclebench.Lock(ctx, b, ml, key)
			}
		})
	})
}
