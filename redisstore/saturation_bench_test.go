package redisstore_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/internal/redisfloor"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// saturationWorkers is how many goroutines drive the server at once, each
// on keys of its own: enough to keep one Redis busy from two cores.
const saturationWorkers = 64

// BenchmarkSaturation: cycles per second on one Redis driven by 64
// goroutines on distinct keys, reqlock (TryObtain + Release) beside the
// floor (SET NX PX + compare-and-delete script), through one client made
// the default way. Each iteration runs a block of floor cycles, then a
// block of reqlock cycles, every worker doing saturationBlock of each, so
// that both see the same machine. Read reqlock/floor: reqlock's cycles per
// second over the floor's (the bar is 0.8).
func BenchmarkSaturation(b *testing.B) {
	ctx := context.Background()
	srv := redistest.Start(b)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
	b.Cleanup(func() { _ = c.Close() })
	l := newLocker(redisstore.New(c))
	const saturationBlock = 20

	floorKeys := make([][]string, saturationWorkers)
	lockKeys := make([][]string, saturationWorkers)
	for w := range saturationWorkers {
		for i := range saturationBlock {
			floorKeys[w] = append(floorKeys[w], "floor:"+strconv.Itoa(w)+":"+strconv.Itoa(i))
			lockKeys[w] = append(lockKeys[w], "k"+strconv.Itoa(w)+":"+strconv.Itoa(i))
		}
	}
	var failed sync.Once
	fail := func(err error) { failed.Do(func() { b.Error(err) }) }
	// block runs cycle on every key of every worker at once and returns the
	// time the slowest worker took.
	block := func(keys [][]string, cycle func(key string) error) time.Duration {
		var wg sync.WaitGroup
		start := time.Now()
		for w := range saturationWorkers {
			wg.Go(func() {
				for _, k := range keys[w] {
					if err := cycle(k); err != nil {
						fail(err)
						return
					}
				}
			})
		}
		wg.Wait()
		return time.Since(start)
	}
	floor := func(key string) error {
		if err := redisfloor.SetNX(ctx, c, key); err != nil {
			return err
		}
		return redisfloor.Release(ctx, c, key)
	}
	reqlock := func(key string) error {
		lk, err := l.TryObtain(ctx, key)
		if err != nil {
			return err
		}
		return lk.Release(ctx)
	}
	block(floorKeys, floor) // connections and scripts, outside the timings
	block(lockKeys, reqlock)

	var floorSpent, lockSpent time.Duration
	for b.Loop() {
		floorSpent += block(floorKeys, floor)
		lockSpent += block(lockKeys, reqlock)
	}
	cycles := float64(b.N * saturationWorkers * saturationBlock)
	b.ReportMetric(cycles/floorSpent.Seconds(), "floor-cycles/s")
	b.ReportMetric(cycles/lockSpent.Seconds(), "reqlock-cycles/s")
	b.ReportMetric(floorSpent.Seconds()/lockSpent.Seconds(), "reqlock/floor")
}
