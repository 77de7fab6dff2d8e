package pgstore_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/benchratio"
)

// BenchmarkGuard is a one-row write transaction (BEGIN, UPDATE, COMMIT)
// without Guard, with Guard (a round trip of its own), and with
// QueueGuard (the check and the write in one batch), interleaved. Bar:
// guarded/tx ≤ 1.2.
func BenchmarkGuard(b *testing.B) {
	s, pool := open(b)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, "CREATE TABLE acct (id int PRIMARY KEY, n bigint); INSERT INTO acct VALUES (1, 0)"); err != nil {
		b.Fatal(err)
	}
	lk, err := core.NewLocker(s, core.WithLogger(quiet)).TryObtain(ctx, "acct-1")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = lk.Release(ctx) }()
	const write = "UPDATE acct SET n = n + 1 WHERE id = 1"
	tx := func(guard func(pgx.Tx) error) {
		t, err := pool.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := guard(t); err != nil {
			b.Fatal(err)
		}
		if _, err := t.Exec(ctx, write); err != nil {
			b.Fatal(err)
		}
		if err := t.Commit(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	benchratio.Ratios(b,
		benchratio.Cycle{Name: "tx", Run: func() { tx(func(pgx.Tx) error { return nil }) }},
		benchratio.Cycle{Name: "guarded", Run: func() { tx(func(t pgx.Tx) error { return s.Guard(ctx, t, lk) }) }},
		benchratio.Cycle{Name: "queued", Run: func() {
			t, err := pool.Begin(ctx)
			if err != nil {
				b.Fatal(err)
			}
			var batch pgx.Batch
			if err := s.QueueGuard(&batch, lk); err != nil {
				b.Fatal(err)
			}
			batch.Queue(write)
			if err := t.SendBatch(ctx, &batch).Close(); err != nil {
				b.Fatal(err)
			}
			if err := t.Commit(ctx); err != nil {
				b.Fatal(err)
			}
		}},
	)
}
