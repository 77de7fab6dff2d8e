package pgstore_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/benchratio"
	"github.com/reqlock/reqlock/pgstore"
)

// BenchmarkOnceTx is a payment (one INSERT) run under Once on a fresh key:
// in the store's transaction (WithTx, which commits the record with it),
// and in the function's own BEGIN, INSERT, COMMIT under a plain Once (the
// floor), interleaved. Bar: tx/own ≤ 1.15.
func BenchmarkOnceTx(b *testing.B) {
	plain, pool := open(b)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, "CREATE TABLE payments (job text NOT NULL)"); err != nil {
		b.Fatal(err)
	}
	own := core.NewLocker(plain, core.WithLogger(quiet))
	tx := core.NewLocker(pgstore.New(pool, pgstore.WithTx()), core.WithLogger(quiet))
	n := 0
	key := func() string { n++; return "job:" + strconv.Itoa(n) }
	once := func(l *core.Locker, fn func(ctx context.Context, key string) error) {
		k := key()
		if _, err := l.Once(ctx, k, 0, func(ctx context.Context) ([]byte, error) { return []byte("paid"), fn(ctx, k) }); err != nil {
			b.Fatal(err)
		}
	}
	const insert = "INSERT INTO payments (job) VALUES ($1)"
	b.ReportAllocs()
	benchratio.Ratios(b,
		benchratio.Cycle{Name: "own", Run: func() {
			once(own, func(ctx context.Context, k string) error {
				t, err := pool.Begin(ctx)
				if err != nil {
					return err
				}
				defer func() { _ = t.Rollback(ctx) }()
				if _, err := t.Exec(ctx, insert, k); err != nil {
					return err
				}
				return t.Commit(ctx)
			})
		}},
		benchratio.Cycle{Name: "tx", Run: func() {
			once(tx, func(ctx context.Context, k string) error {
				t, _ := pgstore.Tx(ctx)
				_, err := t.Exec(ctx, insert, k)
				return err
			})
		}},
	)
}
