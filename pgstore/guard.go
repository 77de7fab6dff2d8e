package pgstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/reqlock/reqlock/core"
)

// guardSQL finds the lock's row if its token still holds it, and locks the
// row FOR KEY SHARE until the transaction ends: an acquire that would take
// the key over locks the row FOR UPDATE first, and so waits for the
// transaction, while the holder's own renewals (which update no key) go
// on.
const guardSQL = `SELECT 1 FROM reqlock_locks
	WHERE key = $1 AND token = $2 AND expires > clock_timestamp() FOR KEY SHARE`

// Guard is the database's own fencing: called inside the caller's
// transaction tx, on the store's database, it returns an error that
// errors.Is core.ErrNotHeld when l no longer holds its key (released,
// lapsed, taken over). Otherwise no other holder can take the key before
// tx ends, so the writes tx makes commit only under the lock, even when the
// holder pauses past its lease after Guard.
//
// Commit or roll back tx before releasing l: the release waits for tx.
func (s *Store) Guard(ctx context.Context, tx pgx.Tx, l *core.Lock) error {
	if l == nil {
		return core.ErrNotHeld
	}
	var one int
	err := tx.QueryRow(ctx, guardSQL, l.StoreKey(), l.Token()).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return core.ErrNotHeld
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
	b.Queue(guardSQL, l.StoreKey(), l.Token()).QueryRow(func(row pgx.Row) error {
		var one int
		err := row.Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return core.ErrNotHeld
		}
		return s.wrap("guard", err)
	})
	return nil
}
