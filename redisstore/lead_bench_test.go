package redisstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/leadtest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// BenchmarkLeadSteadyState: a leader on Redis with 0 or 8 followers in
// line, each a Locker with a client of its own. renewals/third-of-ttl is
// the leader's store calls over the thirds of its lease that passed: 1.00
// whatever the followers.
func BenchmarkLeadSteadyState(b *testing.B) {
	srv := redistest.Start(b)
	const ttl, window = 600 * time.Millisecond, 3 * time.Second
	for _, followers := range []int{0, 8} {
		b.Run(fmt.Sprintf("followers=%d", followers), func(b *testing.B) {
			var calls, thirds float64
			for b.Loop() {
				c, _ := redisLeaderCost(b, srv.Addr, ttl, window, followers)
				calls += float64(c)
				thirds += float64(window / (ttl / 3))
			}
			b.ReportMetric(calls/thirds, "renewals/third-of-ttl")
		})
	}
}

// redisLeaderCost is the leader's cost on Redis: the followers, each with
// a client of its own, stand in the key's line and are woken by the
// store, not by the leader.
func redisLeaderCost(b *testing.B, addr string, ttl, window time.Duration, followers int) (calls, extends int64) {
	client := func() *redis.Client {
		c := redis.NewClient(redistest.ClientOptions(addr))
		b.Cleanup(func() { c.Close() })
		return c
	}
	return leadtest.Cost(b, redisstore.New(client()), func() core.Store { return redisstore.New(client()) }, "bench-lead", ttl, window, followers)
}

// BenchmarkLeadHandOver: the gap from a clean resign (fn returns) to the
// next leader's fn, beside its floor, the gap from a Release to the
// Obtain of a waiter in line, in one interleaved loop on one Redis. Each
// gap starts as the holder's goroutine is told to let go. lead/lock is
// at most about 1.
func BenchmarkLeadHandOver(b *testing.B) {
	srv := redistest.Start(b)
	newLocker := func() *core.Locker {
		c := redis.NewClient(redistest.ClientOptions(srv.Addr))
		b.Cleanup(func() { c.Close() })
		return leadLocker(redisstore.New(c))
	}
	a, f := newLocker(), newLocker()
	ctx := context.Background()
	inLine := func(key string) {
		for {
			h, err := a.Inspect(ctx, key)
			if err == nil && h.Waiting == 1 {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	var lockGap, leadGap time.Duration
	for b.Loop() {
		// The lock: a holder releases, a waiter in line gets it.
		lk, err := a.Obtain(ctx, "bench-handoff")
		if err != nil {
			b.Fatal(err)
		}
		var next *core.Lock
		var got time.Time
		var waited sync.WaitGroup
		waited.Go(func() {
			if next, err = f.Obtain(ctx, "bench-handoff"); err == nil {
				got = time.Now()
			}
		})
		release := make(chan struct{})
		waited.Go(func() { <-release; lk.Release(ctx) }) // from another goroutine, as a leader resigns
		inLine("bench-handoff")
		released := time.Now()
		close(release)
		waited.Wait()
		if err != nil {
			b.Fatal(err)
		}
		lockGap += got.Sub(released)
		next.Release(ctx)

		// Leadership: a leader resigns, a follower in line leads.
		resign, leads := make(chan struct{}), make(chan struct{})
		var done sync.WaitGroup
		done.Go(func() {
			_ = a.Lead(ctx, "bench-lead", func(context.Context) error { close(leads); <-resign; return nil })
		})
		<-leads
		var led time.Time
		done.Go(func() {
			_ = f.Lead(ctx, "bench-lead", func(context.Context) error { led = time.Now(); return nil })
		})
		inLine("bench-lead")
		resigned := time.Now()
		close(resign)
		done.Wait()
		leadGap += led.Sub(resigned)
	}
	n := float64(b.N)
	b.ReportMetric(float64(lockGap.Microseconds())/n, "lock-gap-µs")
	b.ReportMetric(float64(leadGap.Microseconds())/n, "lead-gap-µs")
	b.ReportMetric(float64(leadGap)/float64(lockGap), "lead/lock")
}

// leadLocker is a Locker whose warnings (a leader's lost term at the end of
// a benchmark) stay out of the benchmark's output.
func leadLocker(s core.Store, opts ...core.Option) *core.Locker {
	return core.NewLocker(s, append([]core.Option{core.WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)
}
