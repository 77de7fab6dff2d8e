package pgstore

import "context"

// Active counts the other sessions of the store's database that are
// running a statement.
func Active(ctx context.Context, s *Store) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'`).Scan(&n)
	return n, err
}

// LockWaits counts the other sessions of the store's database that wait
// for a lock.
func LockWaits(ctx context.Context, s *Store) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`).Scan(&n)
	return n, err
}
