package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reqlock/reqlock/core/store"
)

// WithTx has core.Locker.Once (and a middleware's replay) run its function
// in a transaction the store begins and guards (see Guard), and that
// commits together with the run's record and the release of the lock: the
// function writes through Tx(ctx), and its writes land with the record or
// not at all. A commit that lands means every later caller replays the
// record; one that fails means neither landed, and the next caller runs
// the function again. A holder that lost its lock cannot commit: the
// commit checks the lease. Exactly once, for the effects the function
// writes through the transaction.
//
// The transaction is READ COMMITTED. While it is open no other holder
// takes the key, even past the lease (Guard's rule): a function that hangs
// keeps the key until the database ends the transaction (set
// idle_in_transaction_session_timeout on the role).
func WithTx() Option {
	return func(o *options) { o.tx = true }
}

// txKey is the context key of the transaction of a run under WithTx.
type txKey struct{}

// Tx returns the transaction a function runs in under WithTx, from the
// function's (or handler's) context: write the effects that must land
// exactly once through it, and do not commit or roll it back (the store
// does, with the record). It is not safe for concurrent use. ok is false
// outside such a run.
func Tx(ctx context.Context) (tx pgx.Tx, ok bool) {
	tx, ok = ctx.Value(txKey{}).(pgx.Tx)
	return tx, ok && tx != nil
}

// RecordsInUnit implements store.UnitRecorder: with WithTx.
func (s *Store) RecordsInUnit() bool { return s.opts.tx }

// RunInUnit implements store.UnitRecorder: BEGIN, the guard of the lock
// (token and fence, FOR KEY SHARE), work with the transaction on its
// context (Tx), then reqlock_release_record and COMMIT in the transaction.
// Two round trips beyond work's own and the commit's.
func (s *Store) RunInUnit(ctx context.Context, key, token string, fence uint64, retention time.Duration, work func(context.Context) []byte) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return s.wrap("begin", err)
	}
	committing := false
	defer func() {
		if !committing {
			// Rolled back on a context of its own: work's may have ended
			// with the lock.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_ = tx.Rollback(rctx)
			cancel()
		}
	}()
	var one int
	if err := tx.QueryRow(ctx, guardSQL, rowKey(key), token, int64(fence)).Scan(&one); err != nil {
		return s.guardErr(err)
	}
	record := work(context.WithValue(ctx, txKey{}, tx))
	if record == nil {
		return nil
	}
	ms := (retention + time.Millisecond - 1) / time.Millisecond
	var ok bool
	if err := tx.QueryRow(ctx, recordSQL, rowKey(key), token, record, int64(ms), nil, 0).Scan(&ok); err != nil {
		return s.wrap("record", err)
	}
	if !ok {
		return store.ErrNotHeld
	}
	committing = true
	if err := tx.Commit(ctx); err != nil {
		return s.wrap("commit", err)
	}
	s.sweep(ctx)
	return nil
}
