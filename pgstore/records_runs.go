package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/reqlock/reqlock/core/store"
)

const (
	markRunSQL   = `SELECT reqlock_mark_run($1, $2, $3, $4)`
	unmarkRunSQL = `SELECT reqlock_unmark_run($1, $2)`
	forgetRunSQL = `DELETE FROM reqlock_runs WHERE key = $1`
)

// MarkRun implements store.RunMarker: reqlock_mark_run, one round trip.
func (s *Store) MarkRun(ctx context.Context, key, token string, retention time.Duration, again bool) (bool, error) {
	ms := (retention + time.Millisecond - 1) / time.Millisecond
	var status int
	err := s.run(ctx, stmt{sql: markRunSQL, args: []any{rowKey(key), token, int64(ms), again},
		row: func(r pgx.Row) error { return r.Scan(&status) }})
	switch {
	case err != nil:
		return false, s.wrap("mark run", err)
	case status < 0:
		return false, store.ErrNotHeld
	}
	return status == 1, nil
}

// UnmarkRun implements store.RunMarker.
func (s *Store) UnmarkRun(ctx context.Context, key, token string) error {
	var ok bool
	err := s.run(ctx, stmt{sql: unmarkRunSQL, args: []any{rowKey(key), token},
		row: func(r pgx.Row) error { return r.Scan(&ok) }})
	switch {
	case err != nil:
		return s.wrap("unmark run", err)
	case !ok:
		return store.ErrNotHeld
	}
	return nil
}

// ForgetRun implements store.RunMarker.
func (s *Store) ForgetRun(ctx context.Context, key string) error {
	err := s.run(ctx, stmt{sql: forgetRunSQL, args: []any{rowKey(key)},
		tag: func(pgconn.CommandTag) error { return nil }})
	return s.wrap("forget run", err)
}
