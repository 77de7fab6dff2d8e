package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/reqlock/reqlock/core"
)

// guardSQL finds the lock's row if its token still holds it, and locks the
// row FOR KEY SHARE until the transaction ends: a change of holder locks
// the row FOR UPDATE first, and so waits for the transaction (or, taking
// over a lapsed lease, reports the key taken), while the holder's own
// renewals and other callers' acquires of the live lock (which lock it FOR
// NO KEY UPDATE) go on.
//
// At REPEATABLE READ or SERIALIZABLE the transaction's snapshot may be
// older than a change of holder: the row it shows is then locked FOR
// UPDATE by that change, which fails this statement as a serialization
// failure rather than lock a stale version.
//
// The fence is compared too: every attempt of one wait carries the same
// token, the waiter's hand-off token, so a late copy of an attempt whose
// wait already got the lock may put that waiter in line again, and a later
// release hand it the key under the very token of the lock it held before.
// The fence a release hands on is a new one.
const guardSQL = `SELECT 1 FROM reqlock_locks
	WHERE key = $1 AND token = $2 AND fence = $3 AND expires > clock_timestamp() FOR KEY SHARE`

// Guard is the database's own fencing: called inside the caller's
// transaction tx, on the store's database, it returns an error that
// errors.Is core.ErrNotHeld when l no longer holds its key (released,
// lapsed, taken over). Otherwise no other holder can take the key before
// tx ends, so the writes tx makes commit only under the lock, even when the
// holder pauses past its lease after Guard.
//
// Commit or roll back tx before releasing l: the release waits for tx.
//
// At REPEATABLE READ or SERIALIZABLE, obtain l before tx's first statement
// (which takes its snapshot): a lock taken after the snapshot is not in
// it, and Guard says ErrNotHeld. A snapshot older than a release of l
// fails with an error that errors.Is both core.ErrNotHeld and the
// serialization failure (SQLSTATE 40001): roll back, and do not retry the
// transaction under l.
func (s *Store) Guard(ctx context.Context, tx pgx.Tx, l *core.Lock) error {
	if l == nil {
		return core.ErrNotHeld
	}
	var one int
	err := tx.QueryRow(ctx, guardSQL, rowKey(l.StoreKey()), l.Token(), int64(l.Fence())).Scan(&one)
	return s.guardErr(err)
}

// guardErr is Guard's answer for the error of its statement.
func (s *Store) guardErr(err error) error {
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return core.ErrNotHeld
	case isSerializationFailure(err):
		return fmt.Errorf("pgstore: guard: %w: %w", core.ErrNotHeld, err)
	}
	return s.wrap("guard", err)
}

// QueueGuard is Guard for a transaction that sends its writes as a batch:
// it queues the same check on b, ahead of the writes, so that it costs no
// round trip of its own. Reading the batch's results then fails with an
// error that errors.Is core.ErrNotHeld when l no longer holds its key;
// the writes queued after it have run by then, so roll the transaction
// back on any error from the batch, as always.
func (s *Store) QueueGuard(b *pgx.Batch, l *core.Lock) error {
	if l == nil {
		return core.ErrNotHeld
	}
	b.Queue(guardSQL, rowKey(l.StoreKey()), l.Token(), int64(l.Fence())).QueryRow(func(row pgx.Row) error {
		var one int
		return s.guardErr(row.Scan(&one))
	})
	return nil
}
