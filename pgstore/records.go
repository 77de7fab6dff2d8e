package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reqlock/reqlock/core/store"
)

// AcquireOrRecord implements store.Recorder: the look-up of the key's
// record and the acquire in one call, one round trip.
func (s *Store) AcquireOrRecord(ctx context.Context, l store.Lease) (store.Grant, []byte, error) {
	return s.acquire(ctx, l, nil, true)
}

// ReleaseRecording implements store.Recorder: the token check, the record
// and the release in one call, one round trip, in one transaction, so that
// a holder that lost its lock writes nothing.
func (s *Store) ReleaseRecording(ctx context.Context, key, token string, record []byte, retention time.Duration) error {
	if record == nil {
		record = []byte{} // an empty record, not NULL
	}
	ms := (retention + time.Millisecond - 1) / time.Millisecond
	var ok bool
	err := s.run(ctx, stmt{sql: recordSQL, args: []any{rowKey(key), token, record, int64(ms), nil, 0},
		row: func(r pgx.Row) error { return r.Scan(&ok) }})
	s.sweep(ctx)
	if err != nil {
		return s.wrap("release", err)
	}
	if !ok {
		return store.ErrNotHeld
	}
	return nil
}

// RecordsDurable implements store.Durability: records are rows, durable
// when the server syncs its writes (fsync on).
func (s *Store) RecordsDurable(ctx context.Context) (bool, string, error) {
	var fsync, commit string
	err := s.pool.QueryRow(ctx, `SELECT current_setting('fsync'), current_setting('synchronous_commit')`).Scan(&fsync, &commit)
	if err != nil {
		return false, "", s.wrap("durability", err)
	}
	detail := "fsync=" + fsync + ", synchronous_commit=" + commit
	return fsync == "on", detail, nil
}
