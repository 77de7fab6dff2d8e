package redisstore_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reqlock/reqlock/internal/benchratio"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
	"github.com/reqlock/reqlock/redisstore/internal/node"
)

// BenchmarkRecordHit: a key whose work is done, asked again at the
// decorator level, beside its floors on the same Redis:
//
//   - "get" is a bare GET of a value as long as the record;
//   - "scripted-get" is a one-line script that GETs the record, sent with
//     the hit's keys and arguments as the store sends its acquire: what
//     any hit found in the acquire's one round trip costs at least;
//   - "hit" is TryObtainOrRecord finding the record, and "once" is Once
//     handing back the recorded result (fn does not run).
//
// Read ratio's hit/get and once/get (the replay bar is 1.3), and
// hit/scripted-get for what reqlock adds beyond the script envelope.
func BenchmarkRecordHit(b *testing.B) {
	ctx := context.Background()
	c := redistest.Start(b).Client(b)
	l := newLocker(redisstore.New(c))
	result := bytes.Repeat([]byte("r"), 300) // an order, as the HTTP benchmarks' body and headers
	ran := 0
	fn := func(context.Context) ([]byte, error) { ran++; return result, nil }
	if _, err := l.Once(ctx, "k", time.Hour, fn); err != nil {
		b.Fatal(err)
	}
	storeKey, err := l.StoreKey("k")
	if err != nil {
		b.Fatal(err)
	}
	record, err := c.Get(ctx, storeKey+":record").Bytes()
	if err != nil {
		b.Fatal(err)
	}
	const getKey = "reqlock-bench:get-floor"
	if err := c.Set(ctx, getKey, strings.Repeat("r", len(record)), 0).Err(); err != nil {
		b.Fatal(err)
	}
	cycles := func(b *testing.B) []benchratio.Cycle {
		return []benchratio.Cycle{
			{Name: "get", Run: func() {
				if v, err := c.Get(ctx, getKey).Bytes(); err != nil || len(v) != len(record) {
					b.Fatalf("GET: %d bytes, %v", len(v), err)
				}
			}},
			{Name: "scripted-get", Run: func() {
				if v, err := node.ScriptedRecordGet(ctx, c, storeKey); err != nil || len(v) != len(record) {
					b.Fatalf("scripted GET: %d bytes, %v", len(v), err)
				}
			}},
			{Name: "hit", Run: func() {
				if lk, rec, err := l.TryObtainOrRecord(ctx, "k"); err != nil || lk != nil || len(rec) != len(record) {
					b.Fatalf("hit: lock %v, %d bytes, %v", lk, len(rec), err)
				}
			}},
			{Name: "once", Run: func() {
				if out, err := l.Once(ctx, "k", time.Hour, fn); err != nil || !out.Replayed || ran != 1 {
					b.Fatalf("once: %+v, %v, fn ran %d times", out, err, ran)
				}
			}},
		}
	}
	benchratio.Each(b, "", cycles)
	b.Run("ratio", func(b *testing.B) { benchratio.Ratios(b, cycles(b)...) })
}
