// Package fence makes a SQL write refuse a stale fencing token: the other
// half of the lock's safety for a service that locks on Redis (or any
// reqlock store) and writes to a SQL database. A lock alone cannot stop a
// holder that paused past its lease from writing after the next holder;
// the database can, when each write first checks the lock's fence against
// the last fence that wrote to the same resource, in the write's own
// transaction.
//
// It is the optimistic version check, keyed by resource: one row per
// resource holds the greatest fence that wrote to it. Check moves it up to
// the caller's fence, or refuses with ErrStale when a greater one got
// there first; the row stays locked until the transaction ends, so a
// stale holder's write waits for the newer one's commit and is then
// refused.
//
//	lk, err := locker.Obtain(ctx, "order-42") // on Redis, say
//	...
//	tx, err := db.BeginTx(ctx, nil)
//	...
//	if err := fence.Check(ctx, tx, "order-42", lk.Fence()); err != nil {
//		tx.Rollback() // fence.ErrStale: someone holds the lock after us
//		return err
//	}
//	_, err = tx.ExecContext(ctx, "UPDATE orders SET paid = true WHERE id = $1", 42)
//	...
//	return tx.Commit()
//
// Create the table once with Schema (or CreateTable). It needs only
// database/sql (any PostgreSQL driver) or pgx (CheckPgx).
package fence

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"
)

// ErrStale is a write refused because a greater fence wrote to the
// resource first: the lock was lost, and someone else holds it now.
var ErrStale = errors.New("fence: stale fence: a later lock holder wrote to the resource first")

// Schema creates the table of fences, one row per resource.
const Schema = `CREATE TABLE IF NOT EXISTS reqlock_fences (
  resource text PRIMARY KEY,
  fence    bigint NOT NULL
)`

// checkSQL inserts the resource's row, or moves its fence up: a write of
// the same fence again (one holder's second write) passes, a smaller one
// changes nothing.
const checkSQL = `INSERT INTO reqlock_fences (resource, fence) VALUES ($1, $2)
ON CONFLICT (resource) DO UPDATE SET fence = EXCLUDED.fence
WHERE reqlock_fences.fence <= EXCLUDED.fence`

// Execer is what Check runs on: a *sql.Tx (the point), a *sql.Conn or a
// *sql.DB.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// CreateTable runs Schema.
func CreateTable(ctx context.Context, db Execer) error {
	_, err := db.ExecContext(ctx, Schema)
	return err
}

// Check records fence as the resource's latest, in tx, or returns
// ErrStale when a greater fence wrote to it first. Call it in the write's
// own transaction, before the write, and roll back on an error.
func Check(ctx context.Context, tx Execer, resource string, fence uint64) error {
	f, err := param(fence)
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, checkSQL, resource, f)
	if err != nil {
		return fmt.Errorf("fence: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("fence: %w", err)
	}
	if n == 0 {
		return ErrStale
	}
	return nil
}

// CheckPgx is Check in a pgx transaction.
func CheckPgx(ctx context.Context, tx pgx.Tx, resource string, fence uint64) error {
	f, err := param(fence)
	if err != nil {
		return err
	}
	tag, err := tx.Exec(ctx, checkSQL, resource, f)
	if err != nil {
		return fmt.Errorf("fence: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return ErrStale
	}
	return nil
}

// param is fence as a bigint: reqlock's fences stay below 2^63.
func param(fence uint64) (int64, error) {
	if fence == 0 || fence > math.MaxInt64 {
		return 0, fmt.Errorf("fence: fence %d out of range (1 to 2^63-1)", fence)
	}
	return int64(fence), nil
}
