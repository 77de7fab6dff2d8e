package pgstore

import (
	"context"
	_ "embed"
	"fmt"
)

// Schema is the store's DDL: its tables and functions, every statement
// idempotent. Migrate runs it; teams that run migrations with their own
// tool ship it as it is (it is schema.sql in this package's directory).
//
//go:embed schema.sql
var Schema string

// migrateLockID names the advisory lock Migrate takes: instances starting
// at once run the DDL one after another, not side by side (concurrent
// CREATE OR REPLACE FUNCTION of one function fails with "tuple concurrently
// updated").
const migrateLockID = 0x7265716c6f636b // "reqlock"

// Migrate creates the store's tables and functions if they are missing,
// or brings its functions up to date. It is idempotent and safe when many
// instances call it at once: it runs in one transaction under an advisory
// lock.
func (s *Store) Migrate(ctx context.Context) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return s.wrap("migrate", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrateLockID)); err != nil {
		return s.wrap("migrate", err)
	}
	// No arguments: the simple protocol runs the whole file at once.
	if _, err := tx.Exec(ctx, Schema); err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return s.wrap("migrate", err)
	}
	return nil
}
