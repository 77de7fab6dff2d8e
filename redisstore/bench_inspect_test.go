package redisstore_test

import (
	"context"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/benchratio"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// Inspect on one Redis against its floor, a bare GET of the lock key: one
// round trip each.
func BenchmarkInspectRedis(b *testing.B) {
	ctx := context.Background()
	c := redistest.Start(b).Client(b)
	l := newLocker(redisstore.New(c), core.WithHolder("web-1"))
	lk, err := l.TryObtain(ctx, "k")
	if err != nil {
		b.Fatal(err)
	}
	defer lk.Release(ctx)
	skey, _ := l.StoreKey("k")
	cycles := func(b *testing.B) []benchratio.Cycle {
		return []benchratio.Cycle{
			{Name: "get", Run: func() {
				if err := c.Get(ctx, skey).Err(); err != nil {
					b.Fatal(err)
				}
			}},
			{Name: "inspect", Run: func() {
				if _, err := l.Inspect(ctx, "k"); err != nil {
					b.Fatal(err)
				}
			}},
		}
	}
	benchratio.Each(b, "", cycles)
	b.Run("ratio", func(b *testing.B) { benchratio.Ratios(b, cycles(b)...) })
}
