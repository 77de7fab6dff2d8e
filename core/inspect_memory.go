package core

import (
	"context"
	"strings"
	"time"
)

// Inspect implements Inspector. MemoryStore keeps one fence counter for all
// keys, so Fence is the holder's fence while the key is held and 0 once it
// is free.
func (s *MemoryStore) Inspect(ctx context.Context, key string) (Holding, error) {
	if err := ctx.Err(); err != nil {
		return Holding{}, err
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	h := Holding{Waiting: len(s.lines.byKey[key])}
	cur, ok := s.locks[key]
	if !ok || !now.Before(cur.expires) {
		return h, nil
	}
	h.Held, h.Lease, h.Fence = true, cur.expires.Sub(now), cur.fence
	h.HandedOff = strings.HasPrefix(cur.token, reservedFor(""))
	h.Holder = holderOf(cur.token)
	return h, nil
}
