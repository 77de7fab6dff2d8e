package memorystore

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/reqlock/reqlock/core/store"
)

// memoryPermits is the permits of every key (store.Semaphores), kept apart
// from the locks; guarded by the Store's mu.
type memoryPermits struct {
	byKey   map[string]map[string]memoryPermit // key → token → permit
	sweepAt int                                // sweep expired keys when byKey reaches this size
	lines   map[string][]permitWaiter          // key → its line of waiters, by arrival (semaphore_lines.go)
}

type memoryPermit struct {
	expires time.Time // monotonic
	fence   uint64
}

var _ store.Semaphores = (*Store)(nil)

// live returns key's permits with the expired ones dropped: an expired
// permit frees its place by itself. The caller holds mu.
func (p *memoryPermits) live(key string, now time.Time) map[string]memoryPermit {
	held := p.byKey[key]
	for tok, pm := range held {
		if !now.Before(pm.expires) {
			delete(held, tok)
		}
	}
	if len(held) == 0 {
		delete(p.byKey, key)
		return nil
	}
	return held
}

// sweep drops the expired permits of every key once byKey has doubled
// since the last sweep, so that keys used once do not pile up.
func (p *memoryPermits) sweep(now time.Time) {
	if len(p.byKey) < p.sweepAt {
		return
	}
	for key := range p.byKey {
		p.live(key, now)
	}
	p.sweepAt = max(2*len(p.byKey), minSweep)
}

// AcquirePermit implements store.Semaphores. A caller outside the line of
// waiters is admitted only while the places left outnumber them.
func (s *Store) AcquirePermit(ctx context.Context, l store.Lease, limit int) (store.Grant, error) {
	return s.acquirePermit(ctx, l, limit, "")
}

// acquirePermit is AcquirePermit for waiter ("" for none): refused, it
// joins the line.
func (s *Store) acquirePermit(ctx context.Context, l store.Lease, limit int, waiter string) (store.Grant, error) {
	if err := ctx.Err(); err != nil { // as a network store would: a caller that is gone takes nothing
		return store.Grant{}, err
	}
	now := time.Now()
	s.mu.Lock()
	g, wake, err := s.acquirePermitLocked(l, limit, waiter, now)
	s.mu.Unlock()
	s.wakeAll(l.Key, wake)
	return g, err
}

// acquirePermitLocked is acquirePermit under mu; it also returns the
// waiters to wake once mu is let go: places still left after a grant go
// to the next in line.
func (s *Store) acquirePermitLocked(l store.Lease, limit int, waiter string, now time.Time) (store.Grant, []string, error) {
	line := s.permits.permitLine(l.Key, now)
	held := s.permits.live(l.Key, now)
	if pm, ok := held[l.Token]; ok {
		// Our own permit: granted again, its lease only growing.
		if until := now.Add(l.TTL); until.After(pm.expires) {
			pm.expires = until
			held[l.Token] = pm
		}
		return store.Grant{Fence: pm.fence, Validity: store.Validity(l.TTL)}, nil, nil
	}
	if len(held) >= limit {
		if waiter != "" {
			s.permits.join(l.Key, waiter, now)
		}
		first := now.Add(time.Hour)
		for _, pm := range held {
			if pm.expires.Before(first) {
				first = pm.expires
			}
		}
		return store.Grant{}, nil, &store.NotObtainedError{Remaining: first.Sub(now)}
	}
	// The places left, and the waiters ahead of this caller.
	room, ahead := limit-len(held), len(line)
	inLine := false
	if waiter != "" {
		if i := slices.IndexFunc(line, func(w permitWaiter) bool { return w.id == waiter }); i >= 0 {
			ahead, inLine = i, true
		}
	}
	if ahead >= room {
		if waiter != "" {
			s.permits.join(l.Key, waiter, now)
		}
		return store.Grant{}, nil, &store.NotObtainedError{}
	}
	if held == nil {
		if s.permits.byKey == nil {
			s.permits.byKey = make(map[string]map[string]memoryPermit)
			s.permits.sweepAt = minSweep
		}
		s.permits.sweep(now)
		held = make(map[string]memoryPermit, limit)
		s.permits.byKey[l.Key] = held
	}
	// The locks' counter: strictly increasing for every key, permits too.
	s.lastFence = max(s.lastFence+1, uint64(now.UnixMicro()))
	held[l.Token] = memoryPermit{expires: now.Add(l.TTL), fence: s.lastFence}
	if inLine {
		s.permits.leave(l.Key, waiter)
	}
	var wake []string
	if room > 1 {
		wake = s.permits.heads(l.Key, room-1)
	}
	return store.Grant{Fence: s.lastFence, Validity: store.Validity(l.TTL)}, wake, nil
}

// ExtendPermits implements store.Semaphores.
func (s *Store) ExtendPermits(_ context.Context, leases []store.Lease) []store.Renewal {
	out := make([]store.Renewal, len(leases))
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, l := range leases {
		held := s.permits.live(l.Key, now)
		pm, ok := held[l.Token]
		if !ok {
			out[i].Err = store.ErrNotHeld
			continue
		}
		if until := now.Add(l.TTL); until.After(pm.expires) { // the lease only grows
			pm.expires = until
			held[l.Token] = pm
		}
		out[i].Validity = store.Validity(l.TTL)
	}
	return out
}

// ReleasePermit implements store.Semaphores: the permit goes, and the head
// of the key's line is woken.
func (s *Store) ReleasePermit(_ context.Context, key, token string) error {
	now := time.Now()
	s.mu.Lock()
	held := s.permits.live(key, now)
	if _, ok := held[token]; !ok {
		s.mu.Unlock()
		return store.ErrNotHeld
	}
	delete(held, token)
	if len(held) == 0 {
		delete(s.permits.byKey, key)
	}
	head := s.permits.heads(key, 1)
	s.mu.Unlock()
	s.wakeAll(key, head)
	return nil
}

// CancelPermit implements store.Semaphores: nothing sent to a memory store
// lands late, so it is ReleasePermit.
func (s *Store) CancelPermit(ctx context.Context, l store.Lease) error {
	return s.ReleasePermit(ctx, l.Key, l.Token)
}

// PermitTTL implements store.Semaphores.
func (s *Store) PermitTTL(_ context.Context, key, token string) (time.Duration, error) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	pm, ok := s.permits.live(key, now)[token]
	if !ok {
		return 0, store.ErrNotHeld
	}
	return pm.expires.Sub(now), nil
}

// InspectPermits implements store.Semaphores. It drops nothing: expired
// permits are left out of the answer and for the next write to clear.
func (s *Store) InspectPermits(ctx context.Context, key string) ([]store.Holding, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	var hs []store.Holding
	for tok, pm := range s.permits.byKey[key] {
		if now.Before(pm.expires) {
			hs = append(hs, store.Holding{Held: true, Lease: pm.expires.Sub(now), Fence: pm.fence, Holder: store.HolderOf(tok)})
		}
	}
	slices.SortFunc(hs, func(a, b store.Holding) int { return cmp.Compare(a.Fence, b.Fence) })
	return hs, nil
}
