package memorystore

import (
	"context"
	"strings"
	"time"

	"github.com/reqlock/reqlock/core/store"
)

// Inspect implements store.Inspector. Store keeps one fence counter for all
// keys, so Fence is the holder's fence while the key is held and 0 once it
// is free.
func (s *Store) Inspect(ctx context.Context, key string) (store.Holding, error) {
	if err := ctx.Err(); err != nil {
		return store.Holding{}, err
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	h := store.Holding{Waiting: len(s.lines.byKey[key])}
	cur, ok := s.locks[key]
	if !ok || !now.Before(cur.expires) {
		return h, nil
	}
	h.Held, h.Lease, h.Fence = true, cur.expires.Sub(now), cur.fence
	h.HandedOff = strings.HasPrefix(cur.token, reservedFor(""))
	h.Holder = store.HolderOf(cur.token)
	return h, nil
}
