package pgsafety_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/pgstore"
	"github.com/reqlock/reqlock/pgstore/internal/pgsafety"
)

// lease is every worker's lock lease: short, so that faults outlast it.
const lease = 300 * time.Millisecond

// tablesSQL is the resource the lock protects: one account row, and the
// ledger of the writes it took.
const tablesSQL = `CREATE TABLE account (id int PRIMARY KEY, value bigint NOT NULL, version bigint NOT NULL);
INSERT INTO account VALUES (1, 0, 0);
CREATE TABLE ledger (version bigint PRIMARY KEY, worker text, fence bigint, base bigint, value bigint)`

// worker runs lock-and-write cycles on one key until until.
type worker struct {
	name    string
	pool    *pgxpool.Pool
	store   *pgstore.Store
	locker  *core.Locker
	guarded bool
	// held, when set, runs after the read and before the write, with the
	// lock's fence: where a worker process says it may be stopped.
	held func(fence uint64)
}

func newWorker(name string, pool *pgxpool.Pool, guarded bool) *worker {
	s := pgstore.New(pool)
	return &worker{name: name, pool: pool, store: s, guarded: guarded,
		locker: core.NewLocker(s, core.WithTTL(lease), core.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
			core.WithRetry(backoff.Exponential(5*time.Millisecond, 50*time.Millisecond)))}
}

func (w *worker) run(key string, until time.Time) {
	for time.Now().Before(until) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		lk, err := w.locker.Obtain(ctx, key)
		if err == nil {
			_ = w.write(ctx, lk)
			_ = lk.Release(ctx)
		} else {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}
}

// write is the read-modify-write of the account in one transaction,
// guarded or not; a committed write leaves its ledger row.
func (w *worker) write(ctx context.Context, lk *core.Lock) error {
	tx, err := w.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if w.guarded {
		if err := w.store.Guard(ctx, tx, lk); err != nil {
			return err
		}
	}
	var base, version int64
	if err := tx.QueryRow(ctx, "SELECT value FROM account WHERE id = 1").Scan(&base); err != nil {
		return err
	}
	if w.held != nil {
		w.held(lk.Fence())
	}
	if err := tx.QueryRow(ctx, "UPDATE account SET value = $1, version = version + 1 WHERE id = 1 RETURNING version",
		base+1).Scan(&version); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "INSERT INTO ledger VALUES ($1, $2, $3, $4, $5)",
		version, w.name, int64(lk.Fence()), base, base+1); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// readLedger reads the committed writes in the order the account took them.
func readLedger(ctx context.Context, pool *pgxpool.Pool) ([]pgsafety.Write, error) {
	rows, err := pool.Query(ctx, "SELECT version, worker, fence, base, value FROM ledger ORDER BY version")
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (pgsafety.Write, error) {
		var w pgsafety.Write
		var fence int64
		err := r.Scan(&w.Version, &w.Worker, &fence, &w.Base, &w.Value)
		w.Fence = uint64(fence)
		return w, err
	})
}

// row is one scenario's outcome in one column.
type row struct {
	writes, stale, lost int
	// what the checkers found, for the failure message
	found []string
}

func (r row) String() string { return fmt.Sprintf("%6d %6d %6d", r.writes, r.stale, r.lost) }

var errNoWrites = errors.New("no write committed: the workload did not run")
