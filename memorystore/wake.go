package memorystore

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reqlock/reqlock/core/store"
)

// memoryLines are a Store's lines of waiters and the subscriptions
// that hear of its releases: the same rules as acquire.lua and release.lua,
// in one process. The lines are guarded by the store's mutex; the
// subscriptions by their own, so that waking never runs under the store's.
type memoryLines struct {
	byKey map[string][]string

	mu   sync.Mutex
	subs map[string]*memorySub // by instance
}

// reservedFor is the value a lock handed to waiter holds until it claims it.
func reservedFor(waiter string) string { return "~" + waiter }

func (m *memoryLines) join(key, waiter string) {
	if m.byKey == nil {
		m.byKey = make(map[string][]string)
	}
	if !slices.Contains(m.byKey[key], waiter) {
		m.byKey[key] = append(m.byKey[key], waiter)
	}
}

func (m *memoryLines) leave(key, waiter string) {
	line := m.byKey[key]
	if i := slices.Index(line, waiter); i >= 0 {
		line = slices.Delete(line, i, i+1)
		if len(line) == 0 {
			delete(m.byKey, key)
		} else {
			m.byKey[key] = line
		}
	}
}

// pop takes the head of key's line, or "".
func (m *memoryLines) pop(key string) string {
	line := m.byKey[key]
	if len(line) == 0 {
		return ""
	}
	head := line[0]
	m.leave(key, head)
	return head
}

// drop forgets key's line and returns who stood in it.
func (m *memoryLines) drop(key string) []string {
	line := m.byKey[key]
	delete(m.byKey, key)
	return line
}

// handOffLocked passes key's lock to the head of its line, reserved for
// store.HandOffTimeout, or frees it; it returns the waiter to wake, or "". The
// caller holds mu.
func (s *Store) handOffLocked(key string, now time.Time) string {
	head := s.lines.pop(key)
	if head == "" {
		delete(s.locks, key)
		return ""
	}
	s.locks[key] = memoryLock{token: reservedFor(head), expires: now.Add(store.HandOffTimeout), fence: s.locks[key].fence}
	return head
}

// notify tells waiter's instance that a release of key concerns it.
func (m *memoryLines) notify(key, waiter string) {
	if waiter == "" {
		return
	}
	instance, _, _ := strings.Cut(waiter, "/")
	m.mu.Lock()
	sub := m.subs[instance]
	m.mu.Unlock()
	if sub != nil {
		sub.wake(key, waiter)
	}
}

// AcquireQueued implements store.Waker.
func (s *Store) AcquireQueued(ctx context.Context, l store.Lease, waiter string, withRecord bool) (store.Grant, []byte, error) {
	if err := ctx.Err(); err != nil {
		return store.Grant{}, nil, err
	}
	now := time.Now()
	s.mu.Lock()
	if withRecord {
		if rec, ok := s.records.get(l.Key, now); ok {
			s.mu.Unlock()
			return store.Grant{}, rec, nil
		}
	}
	g, lapsed, err := s.acquireLocked(l, waiter, store.LapseNoticeFrom(ctx), now)
	if err == nil && withRecord && l.Mark.Retention > 0 {
		g.InDoubt = s.markOnAcquire(l, now)
	}
	s.mu.Unlock()
	finishLapses(lapsed)
	return g, nil, err
}

// Leave implements store.Waker.
func (s *Store) Leave(_ context.Context, key, waiter string) error {
	now := time.Now()
	s.mu.Lock()
	s.lines.leave(key, waiter)
	if r, ok := s.runs[key]; ok && r.token == reservedFor(waiter) {
		delete(s.runs, key) // marked by an acquire of the wait's name (store.AcquireMarker)
	}
	woken := ""
	if s.held(key, reservedFor(waiter), now) {
		woken = s.handOffLocked(key, now)
	}
	s.mu.Unlock()
	s.lines.notify(key, woken)
	return nil
}

// Subscribe implements store.Waker.
func (s *Store) Subscribe(_, instance string, wake func(key, waiter string)) store.Subscription {
	sub := &memorySub{wake: wake}
	s.lines.mu.Lock()
	if s.lines.subs == nil {
		s.lines.subs = make(map[string]*memorySub)
	}
	s.lines.subs[instance] = sub
	s.lines.mu.Unlock()
	return sub
}

// memorySub is always listening: nothing to open or close. It does not
// offer Obtain the first-attempt-in-line shortcut (listening): that saves
// a round trip, and in process there is none to save, while an attempt in
// line costs a waiter id and its bookkeeping.
type memorySub struct{ wake func(key, waiter string) }

func (m *memorySub) Hold(context.Context) (func(), error) { return func() {}, nil }
