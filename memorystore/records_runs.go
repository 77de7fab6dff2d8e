package memorystore

import (
	"context"
	"time"

	"github.com/reqlock/reqlock/core/store"
)

// memoryRun is the mark of a run of a recorded key (store.RunMarker):
// whose run it is, and until when it is kept.
type memoryRun struct {
	token   string
	expires time.Time
}

// MarkRun implements store.RunMarker.
func (s *Store) MarkRun(_ context.Context, key, token string, retention time.Duration, again bool) (bool, error) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.held(key, token, now) {
		return false, store.ErrNotHeld
	}
	old, marked := s.runs[key]
	doubt := marked && now.Before(old.expires) && old.token != token
	if doubt && !again {
		return true, nil
	}
	if s.runs == nil {
		s.runs = make(map[string]memoryRun)
	}
	s.runs[key] = memoryRun{token: token, expires: now.Add(retention)}
	return doubt, nil
}

var _ store.AcquireMarker = (*Store)(nil)

// MarksOnAcquire implements store.AcquireMarker: AcquireOrRecord and
// AcquireQueued mark the run under the same lock as they take the key.
func (*Store) MarksOnAcquire() bool { return true }

// markOnAcquire marks the run l.Token took the key for, as l.Mark asks, and
// reports whether the run before it is in doubt; the caller holds mu. An
// earlier run's mark stays, its retention renewed when l.Mark.Again (see
// store.AcquireMarker).
func (s *Store) markOnAcquire(l store.Lease, now time.Time) bool {
	old, marked := s.runs[l.Key]
	if marked && now.Before(old.expires) && old.token != l.Token {
		if l.Mark.Again {
			s.runs[l.Key] = memoryRun{token: old.token, expires: now.Add(l.Mark.Retention)}
		}
		return true
	}
	if s.runs == nil {
		s.runs = make(map[string]memoryRun)
	}
	s.runs[l.Key] = memoryRun{token: l.Token, expires: now.Add(l.Mark.Retention)}
	return false
}

// UnmarkRun implements store.RunMarker.
func (s *Store) UnmarkRun(_ context.Context, key, token string) error {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.held(key, token, now) {
		return store.ErrNotHeld
	}
	delete(s.runs, key)
	return nil
}

// ForgetRun implements store.RunMarker.
func (s *Store) ForgetRun(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.runs, key)
	return nil
}

// sweepRuns drops the marks whose retention ended; the caller holds mu.
func (s *Store) sweepRuns(now time.Time) {
	for k, r := range s.runs {
		if !now.Before(r.expires) {
			delete(s.runs, k)
		}
	}
}
