package redisstore

import (
	"context"
	"time"

	"github.com/reqlock/reqlock/core/store"
)

var _ store.AcquireMarker = (*Store)(nil)

// MarksOnAcquire implements store.AcquireMarker: an acquire that looks for
// the key's record marks the run in the same script (Lease.Mark), so a
// first run costs no round trip for its mark. Single node, Cluster and
// Sentinel alike, and with WithReplicaAcks, whose WAIT then counts the
// mark too.
func (*Store) MarksOnAcquire() bool { return true }

// MarkRun implements store.RunMarker: one script, one round trip, beside
// the key's record.
func (s *Store) MarkRun(ctx context.Context, key, token string, retention time.Duration, again bool) (bool, error) {
	doubt, err := s.n.MarkRun(ctx, key, token, retention, again)
	return doubt, s.dial.explain(err)
}

// UnmarkRun implements store.RunMarker.
func (s *Store) UnmarkRun(ctx context.Context, key, token string) error {
	return s.dial.explain(s.n.UnmarkRun(ctx, key, token))
}

// ForgetRun implements store.RunMarker.
func (s *Store) ForgetRun(ctx context.Context, key string) error {
	return s.dial.explain(s.n.ForgetRun(ctx, key))
}
