package redlock_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/benchratio"
	"github.com/reqlock/reqlock/internal/redisfloor"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore/redlock"
)

// BenchmarkRedlockCycle: one uncontended TryObtain + Release on five
// masters, beside the parallel five-node floor: a bare SET NX PX to all five
// at once, then the compare-and-delete script to all five at once, through
// a fan-out like the store's (one goroutine per node, the same node
// timeout). Read
// reqlock against floor (and scripted-floor: SET NX PX sent as a script)
// from the same run; on two cores five servers make the floor itself several
// times the single-node one.
//
// The ratio line times the floor and reqlock in turn. The store answers
// once a quorum has, and the two slower nodes' calls would then run on into
// the floor's timing and flatter reqlock; so after each reqlock cycle, off
// the clock, it waits for those calls to end (settle).
func BenchmarkRedlockCycle(b *testing.B) {
	ctx := context.Background()
	servers := redistest.StartN(b, 5)
	clients := make([]redis.UniversalClient, len(servers))
	for i, s := range servers {
		clients[i] = s.Client(b)
		clients[i].Ping(ctx) // connect outside the timings
	}
	l := core.NewLocker(redlock.New(clients...), core.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))

	// fanOutFloor is one floor cycle: acquire on all five nodes at once,
	// then the release on all five at once.
	floorCycle := func(b *testing.B, acquire func(context.Context, redis.UniversalClient, string) error) func() {
		return func() {
			errs := fanOutFloor(ctx, clients, func(ctx context.Context, c redis.UniversalClient) error { return acquire(ctx, c, "floor:{k}") })
			errs = append(errs, fanOutFloor(ctx, clients, func(ctx context.Context, c redis.UniversalClient) error {
				return redisfloor.Release(ctx, c, "floor:{k}")
			})...)
			for _, err := range errs {
				if err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	reqlockCycle := func(b *testing.B) func() {
		return func() {
			lk, err := l.TryObtain(ctx, "k")
			if err != nil {
				b.Fatal(err)
			}
			if err := lk.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	benchratio.Each(b, "", func(b *testing.B) []benchratio.Cycle {
		return []benchratio.Cycle{
			{Name: "floor", Run: floorCycle(b, redisfloor.SetNX)},
			{Name: "scripted-floor", Run: floorCycle(b, redisfloor.ScriptedSetNX)},
			{Name: "reqlock", Run: reqlockCycle(b)},
		}
	})
	b.Run("ratio", func(b *testing.B) {
		floor, cycle := floorCycle(b, redisfloor.SetNX), reqlockCycle(b)
		var spentFloor, spentReqlock time.Duration
		for b.Loop() {
			start := time.Now()
			floor()
			spentFloor += time.Since(start)
			start = time.Now()
			cycle()
			spentReqlock += time.Since(start)
			b.StopTimer()
			settle(b, ctx, clients)
			b.StartTimer()
		}
		b.ReportMetric(float64(spentFloor)/float64(b.N), "floor-ns")
		b.ReportMetric(float64(spentReqlock)/float64(b.N), "reqlock-ns")
		b.ReportMetric(float64(spentReqlock)/float64(spentFloor), "reqlock/floor")
	})
}

// settle lets the node calls the store stopped waiting for end (they take a
// round trip or two), then pings every node at once, so that the floor that
// comes next finds them as awake as reqlock finds them after the floor.
func settle(b *testing.B, ctx context.Context, clients []redis.UniversalClient) {
	time.Sleep(2 * time.Millisecond)
	for _, err := range fanOutFloor(ctx, clients, func(ctx context.Context, c redis.UniversalClient) error {
		return c.Ping(ctx).Err()
	}) {
		if err != nil {
			b.Fatal(err)
		}
	}
}

// fanOutFloor runs call on every client at once, each bounded by the
// store's node timeout, and returns once all have answered, as the store's
// own fan-out does for the calls it waits for.
func fanOutFloor(ctx context.Context, clients []redis.UniversalClient, call func(context.Context, redis.UniversalClient) error) []error {
	errs := make([]error, len(clients))
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, redlock.DefaultNodeTimeout)
			defer cancel()
			errs[i] = call(ctx, c)
		})
	}
	wg.Wait()
	return errs
}
