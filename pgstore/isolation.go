package pgstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// serializationFailure is SQLSTATE 40001.
const serializationFailure = "40001"

// isSerializationFailure reports whether err is a serialization failure:
// the statement ran at REPEATABLE READ or SERIALIZABLE and met a change
// committed after its snapshot.
func isSerializationFailure(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == serializationFailure
}

// stmt is one of the store's statements and what reads its answer: row
// for QueryRow, rows for Query, tag for Exec.
type stmt struct {
	sql  string
	args []any
	row  func(pgx.Row) error
	rows func(pgx.Rows) error
	tag  func(pgconn.CommandTag) error
}

// run sends st. The store's functions count on READ COMMITTED: each
// statement sees what was committed before it locked a row. A database or
// role whose default is stricter fails them with serialization failures
// under contention (the permits' at once: their rows do not conflict, see
// reqlock_permit_lock); a statement that fails so took nothing (it ran alone,
// and rolled back), so the store sends it again, and from then on every
// statement, inside BEGIN ISOLATION LEVEL READ COMMITTED ... COMMIT, in
// one pipeline: still one round trip.
func (s *Store) run(ctx context.Context, st stmt) error {
	if !s.strict.Load() {
		err := s.runAlone(ctx, st)
		if !isSerializationFailure(err) {
			return err
		}
		s.strict.Store(true)
	}
	return s.runReadCommitted(ctx, st)
}

func (s *Store) runAlone(ctx context.Context, st stmt) error {
	switch {
	case st.row != nil:
		return st.row(s.pool.QueryRow(ctx, st.sql, st.args...))
	case st.rows != nil:
		rows, err := s.pool.Query(ctx, st.sql, st.args...)
		if err != nil {
			return err
		}
		return st.rows(rows)
	default:
		tag, err := s.pool.Exec(ctx, st.sql, st.args...)
		if err != nil {
			return err
		}
		return st.tag(tag)
	}
}

func (s *Store) runReadCommitted(ctx context.Context, st stmt) error {
	// The reader's own errors (no rows) are kept aside: the batch must
	// still read the COMMIT's answer.
	var readErr error
	b := &pgx.Batch{}
	b.Queue("BEGIN ISOLATION LEVEL READ COMMITTED")
	q := b.Queue(st.sql, st.args...)
	switch {
	case st.row != nil:
		q.QueryRow(func(row pgx.Row) error { readErr = st.row(row); return nil })
	case st.rows != nil:
		q.Query(func(rows pgx.Rows) error { readErr = st.rows(rows); return nil })
	default:
		q.Exec(func(tag pgconn.CommandTag) error { readErr = st.tag(tag); return nil })
	}
	b.Queue("COMMIT")
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	return readErr
}
