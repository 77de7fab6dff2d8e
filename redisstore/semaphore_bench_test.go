package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/benchratio"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// permitFloorScript is the hand-written semaphore the permit cycle is read
// against (the "fair semaphore" of Redis in Action, less its fairness):
// prune the expired permits from a sorted set by lease end, and admit
// while fewer than the limit are held. Its release is a bare ZREM.
var permitFloorScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
  return 1
end
return 0`)

// BenchmarkPermitCycle is one uncontended permit taken and given back,
// limit 3: the floor's script and ZREM, the store's (AcquirePermit +
// ReleasePermit), and a Semaphore's (TryObtain + Release), interleaved in
// one run. Bar: store/floor ≤ 1.15.
func BenchmarkPermitCycle(b *testing.B) {
	c := redistest.Start(b).Client(b)
	s := redisstore.New(c)
	sem := core.NewLocker(s, core.WithLogger(quietLog)).Semaphore(3)
	ctx := context.Background()
	lease := store.Lease{Key: "reqlock:{bench-store}", Token: "0123456789abcdefghijkl", TTL: 10 * time.Second}
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	benchratio.Ratios(b,
		benchratio.Cycle{Name: "floor", Run: func() {
			ok, err := permitFloorScript.Run(ctx, c, []string{"reqlock:{bench-floor}"}, lease.Token, 10000, 3).Int()
			must(err)
			if ok != 1 {
				b.Fatal("the floor's key was full")
			}
			must(c.ZRem(ctx, "reqlock:{bench-floor}", lease.Token).Err())
		}},
		benchratio.Cycle{Name: "store", Run: func() {
			_, err := s.AcquirePermit(ctx, lease, 3)
			must(err)
			must(s.ReleasePermit(ctx, lease.Key, lease.Token))
		}},
		benchratio.Cycle{Name: "semaphore", Run: func() {
			lk, err := sem.TryObtain(ctx, "bench-semaphore")
			must(err)
			must(lk.Release(ctx))
		}},
	)
}
