package pgstore_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/benchratio"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// The floor: the two statements a hand-written lock would send, on a
// table of its own with nothing but a primary key.
const (
	floorTableSQL = `CREATE TABLE floor_locks (key text PRIMARY KEY, token text NOT NULL, expires timestamptz NOT NULL)`
	floorTakeSQL  = `INSERT INTO floor_locks (key, token, expires) VALUES ($1, $2, clock_timestamp() + interval '10 seconds')
		ON CONFLICT (key) DO UPDATE SET token = EXCLUDED.token, expires = EXCLUDED.expires
		WHERE floor_locks.expires < clock_timestamp()`
	floorFreeSQL = `DELETE FROM floor_locks WHERE key = $1 AND token = $2`
)

// floorTake runs the floor's acquire: true when it took the key.
func floorTake(ctx context.Context, pool *pgxpool.Pool, key, token string) (bool, error) {
	tag, err := pool.Exec(ctx, floorTakeSQL, key, token)
	return tag.RowsAffected() == 1, err
}

func floorFree(ctx context.Context, pool *pgxpool.Pool, key, token string) error {
	_, err := pool.Exec(ctx, floorFreeSQL, key, token)
	return err
}

// BenchmarkCycle is one uncontended acquire and release of one key: the
// store's (Acquire + Release), the Locker's (TryObtain + Release), the
// floor's two statements, and an advisory lock's pair on one connection,
// interleaved in one run. Bar: store/floor ≤ 1.15.
func BenchmarkCycle(b *testing.B) {
	s, pool := open(b)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, floorTableSQL); err != nil {
		b.Fatal(err)
	}
	l := core.NewLocker(s, core.WithLogger(quiet))
	lease := store.Lease{Key: "reqlock:{bench-store}", Token: "0123456789abcdefghijkl", TTL: 10 * time.Second}
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	benchratio.Ratios(b,
		benchratio.Cycle{Name: "floor", Run: func() {
			ok, err := floorTake(ctx, pool, "reqlock:{bench-floor}", lease.Token)
			must(err)
			if !ok {
				b.Fatal("the floor's key was taken")
			}
			must(floorFree(ctx, pool, "reqlock:{bench-floor}", lease.Token))
		}},
		benchratio.Cycle{Name: "store", Run: func() {
			_, err := s.Acquire(ctx, lease)
			must(err)
			must(s.Release(ctx, lease.Key, lease.Token))
		}},
		benchratio.Cycle{Name: "locker", Run: func() {
			lk, err := l.TryObtain(ctx, "bench-locker")
			must(err)
			must(lk.Release(ctx))
		}},
		benchratio.Cycle{Name: "advisory", Run: func() {
			c, err := pool.Acquire(ctx)
			must(err)
			var ok bool
			must(c.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", int64(42)).Scan(&ok))
			must(c.QueryRow(ctx, "SELECT pg_advisory_unlock($1)", int64(42)).Scan(&ok))
			c.Release()
		}},
	)
}
