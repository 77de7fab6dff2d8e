package pgstore

import (
	"context"

	"github.com/reqlock/reqlock/core/store"
)

// Cancel implements store.Canceler. pgx gives up on a statement when its
// context ends, but the statement may still reach the server, or be running
// there, and commit: Cancel deletes the lock if l.Token holds it, and
// leaves a marker for the token, kept as long as a waiter's place in line,
// so that an acquire of it that lands later takes nothing. One round trip.
func (s *Store) Cancel(ctx context.Context, l store.Lease) error {
	ms := keepLine(l.TTL).Milliseconds()
	return s.release(ctx, l.Key, l.Token, &ms, nil)
}
