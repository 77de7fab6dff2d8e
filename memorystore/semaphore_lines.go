package memorystore

import (
	"context"
	"slices"
	"time"

	"github.com/reqlock/reqlock/core/store"
)

// The lines of waiters for permits (store.PermitLines), by the rules of
// redisstore's permit_acquire.lua, in one process: a caller outside the
// line is admitted only while the places left outnumber the waiters, a
// waiter only while fewer waiters stand ahead of it than places are left;
// a release wakes the head of the line, and a waiter admitted with places
// still left wakes the next ones. Guarded by the Store's mu.

var _ store.PermitLines = (*Store)(nil)

// permitWaiter is one waiter in a key's permit line.
type permitWaiter struct {
	id    string    // '<instance>/<wait>'
	asked time.Time // when it last asked
}

// permitLine returns key's line with the waiters that stopped asking
// dropped. The caller holds mu.
func (p *memoryPermits) permitLine(key string, now time.Time) []permitWaiter {
	line := slices.DeleteFunc(p.lines[key], func(w permitWaiter) bool { return now.Sub(w.asked) >= store.PermitLineKeep })
	if len(line) == 0 {
		delete(p.lines, key)
		return nil
	}
	p.lines[key] = line
	return line
}

// join puts waiter in key's line, in the place it first took, and notes
// that it asked now. The caller holds mu.
func (p *memoryPermits) join(key, waiter string, now time.Time) {
	line := p.lines[key]
	if i := slices.IndexFunc(line, func(w permitWaiter) bool { return w.id == waiter }); i >= 0 {
		line[i].asked = now
		return
	}
	if p.lines == nil {
		p.lines = make(map[string][]permitWaiter)
	}
	p.lines[key] = append(line, permitWaiter{id: waiter, asked: now})
}

// leave takes waiter out of key's line and returns the head of the line
// left, to wake, or "". The caller holds mu.
func (p *memoryPermits) leave(key, waiter string) string {
	line := slices.DeleteFunc(p.lines[key], func(w permitWaiter) bool { return w.id == waiter })
	if len(line) == 0 {
		delete(p.lines, key)
		return ""
	}
	p.lines[key] = line
	return line[0].id
}

// heads returns the first n waiters of key's line, at most 16, to wake.
// The caller holds mu.
func (p *memoryPermits) heads(key string, n int) []string {
	var out []string
	for _, w := range p.lines[key] {
		if len(out) == min(n, 16) {
			break
		}
		out = append(out, w.id)
	}
	return out
}

// AcquirePermitQueued implements store.PermitLines: AcquirePermit for a
// waiter, which joins the line when refused.
func (s *Store) AcquirePermitQueued(ctx context.Context, l store.Lease, limit int, waiter string) (store.Grant, error) {
	return s.acquirePermit(ctx, l, limit, waiter)
}

// LeavePermitLine implements store.PermitLines: the waiter leaves the
// line, and the waiter now at its head is woken.
func (s *Store) LeavePermitLine(_ context.Context, key, waiter string) error {
	s.mu.Lock()
	head := s.permits.leave(key, waiter)
	s.mu.Unlock()
	s.lines.notify(key, head)
	return nil
}

// SubscribePermits implements store.PermitLines: the same subscriptions as
// the locks' (Subscribe); a Semaphore's Locker is an instance of its own.
func (s *Store) SubscribePermits(prefix, instance string, wake func(key, waiter string)) store.Subscription {
	return s.Subscribe(prefix, instance, wake)
}

// wakeAll tells each waiter's instance that a place of key may be theirs.
func (s *Store) wakeAll(key string, waiters []string) {
	for _, w := range waiters {
		s.lines.notify(key, w)
	}
}
