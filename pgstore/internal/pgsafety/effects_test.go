package pgsafety_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/internal/safety"
	"github.com/reqlock/reqlock/pgstore"
)

// The Postgres row of the effects table (internal/safety's): a holder
// paused past its lease after it wrote its effect, a payment row, while a
// duplicate runs the same Once. Without WithTx the payment is written in
// a transaction of its own (an effect beside the lock, not in its
// transaction): RunAgain commits a second payment, RefuseInDoubt refuses
// the duplicate. With WithTx the payment is written through pgstore.Tx:
// the paused holder cannot commit, and the duplicate pays once.
func TestEffectRows(t *testing.T) {
	const (
		runs = 10
		// A lease longer than the workload's: acquiring, marking the run
		// and writing the payment must fit in it on a loaded machine.
		lease = time.Second
	)
	// A connection for each holder's transaction and each duplicate's.
	pool := pgtest.OpenPool(t, pgtest.Shared(t).NewDatabase(t), func(c *pgxpool.Config) { c.MaxConns = 4 * runs })
	ctx := context.Background()
	if err := pgstore.New(pool).Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "CREATE TABLE payments (job text NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	quiet := core.WithLogger(slog.New(slog.DiscardHandler))
	measure := func(s *pgstore.Store, policy core.DoubtPolicy, eff safety.Effect) safety.Effects {
		holder := core.NewLocker(s, core.WithTTL(lease), core.WithoutWatchdog(), quiet, core.WithDoubtPolicy(policy))
		dup := core.NewLocker(s, core.WithRetry(backoff.Constant(20*time.Millisecond)), quiet, core.WithDoubtPolicy(policy))
		got := safety.PausedAfterEffect(holder, dup, lease, runs, eff)
		if len(got.Errors) > 0 {
			t.Errorf("%s", strings.Join(got.Errors, "; "))
		}
		return got
	}
	beside := measure(pgstore.New(pool), core.RunAgain, ownTx(pool))
	refused := measure(pgstore.New(pool), core.RefuseInDoubt, ownTx(pool))
	inTx := measure(pgstore.New(pool, pgstore.WithTx()), core.RunAgain, throughTx(pool))
	if beside.Second != runs {
		t.Errorf("RunAgain: %v; want a second payment in every run (the pause is past the lease)", beside)
	}
	if refused.Second != 0 || refused.Refused != runs {
		t.Errorf("RefuseInDoubt: %v; want every duplicate refused and no second payment", refused)
	}
	if inTx.Second != 0 {
		t.Errorf("WithTx: %v; want no second payment", inTx)
	}
	t.Log("\n" + safety.EffectsTable([][4]string{{"postgres", beside.String(), refused.String(), inTx.String()}}))
}

// ownTx pays in a transaction of the function's own, outside the lock's.
func ownTx(pool *pgxpool.Pool) safety.Effect {
	return safety.Effect{
		Make: func(ctx context.Context, key string) error {
			_, err := pool.Exec(ctx, "INSERT INTO payments (job) VALUES ($1)", key)
			return err
		},
		Count: count(pool),
	}
}

// throughTx pays through the store's transaction (pgstore.WithTx).
func throughTx(pool *pgxpool.Pool) safety.Effect {
	return safety.Effect{
		Make: func(ctx context.Context, key string) error {
			tx, ok := pgstore.Tx(ctx)
			if !ok {
				return errors.New("no transaction under WithTx")
			}
			_, err := tx.Exec(ctx, "INSERT INTO payments (job) VALUES ($1)", key)
			return err
		},
		Count: count(pool),
	}
}

func count(pool *pgxpool.Pool) func(context.Context, string) (int, error) {
	return func(ctx context.Context, key string) (int, error) {
		var n int
		err := pool.QueryRow(ctx, "SELECT count(*) FROM payments WHERE job = $1", key).Scan(&n)
		return n, err
	}
}
