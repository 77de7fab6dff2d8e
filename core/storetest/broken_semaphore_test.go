package storetest_test

import (
	"context"
	"errors"

	"github.com/reqlock/reqlock/core/store"
)

// What brokenStore breaks in permits (see brokenCases):
//   - permit-ttl-longest: a full key's answer says when the last permit
//     frees up, not the first, so a waiter sleeps past a place freed by a
//     lease that ran out;
//   - permit-limit-largest: every call is held to the largest limit ever
//     asked for on its key, not its own.

func (s *brokenStore) AcquirePermit(ctx context.Context, l store.Lease, limit int) (store.Grant, error) {
	g, err := s.Store.AcquirePermit(ctx, l, s.permitLimit(l.Key, limit))
	return g, s.permitRefusal(ctx, l.Key, err)
}

func (s *brokenStore) AcquirePermitQueued(ctx context.Context, l store.Lease, limit int, waiter string) (store.Grant, error) {
	g, err := s.Store.AcquirePermitQueued(ctx, l, s.permitLimit(l.Key, limit), waiter)
	return g, s.permitRefusal(ctx, l.Key, err)
}

// permitLimit is the limit s holds a call on key to.
func (s *brokenStore) permitLimit(key string, limit int) int {
	if s.breaks != "permit-limit-largest" {
		return limit
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limits == nil {
		s.limits = make(map[string]int)
	}
	s.limits[key] = max(s.limits[key], limit)
	return s.limits[key]
}

// permitRefusal is err as s answers a refused permit of key.
func (s *brokenStore) permitRefusal(ctx context.Context, key string, err error) error {
	var no *store.NotObtainedError
	if s.breaks != "permit-ttl-longest" || !errors.As(err, &no) || no.Remaining <= 0 {
		return err
	}
	hs, ierr := s.Store.InspectPermits(ctx, key)
	if ierr != nil {
		return err
	}
	longest := no.Remaining
	for _, h := range hs {
		longest = max(longest, h.Lease)
	}
	return &store.NotObtainedError{Remaining: longest}
}
