package memorystore

import (
	"context"
	"sync"
	"time"

	"github.com/reqlock/reqlock/core/store"
)

// Store keeps locks in this process: the default for examples, tests
// and single-instance services. It follows the same rules as redisstore.Store
// (tokens, leases, fences that never go backwards) without the network.
type Store struct {
	mu        sync.Mutex
	locks     map[string]memoryLock
	lastFence uint64
	sweepAt   int // sweep expired entries when the map reaches this size

	records memoryRecords
	lines   memoryLines
	runs    map[string]memoryRun // marks of runs of recorded keys (RunMarker)
	units   map[string]string    // key: the token whose unit is open on it (UnitRecorder)
	unitsOn bool                 // WithUnits
	permits memoryPermits
}

type memoryLock struct {
	token   string
	expires time.Time // monotonic
	fence   uint64    // the holder's, for Inspect
	// lapse tells the holder's Locker that its lease ran out and the key
	// was taken or swept (see store.LapseNotice). nil: nobody listens.
	lapse store.LapseNotice
}

// minSweep is the map size below which expired entries are left for their
// key's next use: sweeping a small map buys nothing.
const minSweep = 1024

// New returns an empty in-process store. Its records (see
// store.Recorder) take at most DefaultRecordBytes; WithRecordBytes changes
// that.
func New() *Store {
	return &Store{locks: make(map[string]memoryLock), sweepAt: minSweep,
		records: memoryRecords{limit: DefaultRecordBytes}}
}

// WithRecordBytes sets how many bytes of records s keeps at most (keys and
// values counted); past it the oldest records go first, before their
// retention ends. It returns s, and panics unless n > 0.
func (s *Store) WithRecordBytes(n int) *Store {
	if n <= 0 {
		panic("reqlock: memorystore.Store.WithRecordBytes: limit must be positive")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records.limit = n
	s.records.evict(time.Now())
	return s
}

// AcquireOrRecord implements store.Recorder.
func (s *Store) AcquireOrRecord(ctx context.Context, l store.Lease) (store.Grant, []byte, error) {
	return s.AcquireQueued(ctx, l, "", true)
}

// ReleaseRecording implements store.Recorder.
func (s *Store) ReleaseRecording(_ context.Context, key, token string, record []byte, retention time.Duration) error {
	now := time.Now()
	s.mu.Lock()
	if !s.held(key, token, now) {
		s.mu.Unlock()
		return store.ErrNotHeld
	}
	s.records.put(key, record, now.Add(retention), now)
	delete(s.runs, key)
	delete(s.locks, key)
	line := s.lines.drop(key) // everyone in line gets the record
	s.mu.Unlock()
	for _, waiter := range line {
		s.lines.notify(key, waiter)
	}
	return nil
}

// Acquire implements Store.
func (s *Store) Acquire(ctx context.Context, l store.Lease) (store.Grant, error) {
	if err := ctx.Err(); err != nil { // as a network store would: a caller that is gone takes nothing
		return store.Grant{}, err
	}
	now := time.Now()
	s.mu.Lock()
	g, lapsed, err := s.acquireLocked(l, "", store.LapseNoticeFrom(ctx), now)
	s.mu.Unlock()
	finishLapses(lapsed)
	return g, err
}

// acquireLocked is Acquire for waiter ("" for none), as acquire.lua: a lock
// handed to waiter is taken; a waiter that finds it taken joins the line.
// The grant carries lapse, when not nil. Holders whose lease ran out on
// this key (taken now) or on others (swept) are marked lost here, under mu,
// before anyone can be granted those keys; the caller holds mu, and
// finishes lapsed once it has let go of it and before it answers.
func (s *Store) acquireLocked(l store.Lease, waiter string, lapse store.LapseNotice, now time.Time) (g store.Grant, lapsed []func(), err error) {
	if cur, ok := s.locks[l.Key]; ok && (now.Before(cur.expires) || s.unitHolds(l.Key, l.Token)) && cur.token != l.Token &&
		(waiter == "" || cur.token != reservedFor(waiter)) {
		if waiter != "" {
			s.lines.join(l.Key, waiter)
		}
		// A unit holds a lapsed lease until it ends: how long is unknown.
		return store.Grant{}, nil, &store.NotObtainedError{Remaining: max(cur.expires.Sub(now), time.Millisecond)}
	}
	if waiter != "" {
		s.lines.leave(l.Key, waiter)
	}
	// One counter for every key is strictly increasing per key too, and
	// leaves nothing behind for keys used once. Never below wall-clock
	// microseconds, fences keep growing across a restart of the process.
	s.lastFence = max(s.lastFence+1, uint64(now.UnixMicro()))
	// A retried acquire that finds its own token keeps the lease it has if
	// that is longer, as in Redis: the holder may have extended it since.
	cur := s.locks[l.Key]
	if until := now.Add(l.TTL); !until.Before(cur.expires) || cur.token != l.Token {
		cur.expires = until
	}
	if cur.token != l.Token {
		if cur.lapse != nil {
			lapsed = lapseInto(cur.lapse, lapsed)
		}
		cur.lapse = lapse
	}
	s.locks[l.Key] = memoryLock{token: l.Token, expires: cur.expires, fence: s.lastFence, lapse: cur.lapse}
	if len(s.locks) >= s.sweepAt {
		lapsed = s.sweep(now, lapsed)
	}
	// The same margin as the network stores: the holder's timer may fire a
	// little late, and must still declare the lock lost before it is free.
	return store.Grant{Fence: s.lastFence, Validity: store.Validity(l.TTL)}, lapsed, nil
}

// sweep drops expired entries. It runs when the map has doubled since the
// last sweep, so its cost per Acquire stays constant.
// The holders of the entries it drops lapsed: they are marked lost, and
// added to lapsed.
func (s *Store) sweep(now time.Time, lapsed []func()) []func() {
	for k, v := range s.locks {
		if !now.Before(v.expires) && s.units[k] == "" {
			delete(s.locks, k)
			if v.lapse != nil {
				lapsed = lapseInto(v.lapse, lapsed)
			}
		}
	}
	s.records.evict(now)
	s.sweepRuns(now)
	s.sweepAt = max(2*len(s.locks), minSweep)
	return lapsed
}

// held returns the live entry key holds for token; the caller holds mu.
func (s *Store) held(key, token string, now time.Time) bool {
	cur, ok := s.locks[key]
	return ok && cur.token == token && now.Before(cur.expires)
}

// Extend implements Store.
func (s *Store) Extend(_ context.Context, leases []store.Lease) []store.Renewal {
	out := make([]store.Renewal, len(leases))
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, l := range leases {
		if !s.held(l.Key, l.Token, now) {
			out[i].Err = store.ErrNotHeld
			continue
		}
		// As in Redis, the lease only grows.
		if cur := s.locks[l.Key]; now.Add(l.TTL).After(cur.expires) {
			cur.expires = now.Add(l.TTL)
			s.locks[l.Key] = cur
		}
		out[i].Validity = store.Validity(l.TTL)
	}
	return out
}

// Release implements Store.
func (s *Store) Release(_ context.Context, key, token string) error {
	now := time.Now()
	s.mu.Lock()
	if !s.held(key, token, now) {
		s.mu.Unlock()
		return store.ErrNotHeld
	}
	woken := s.handOffLocked(key, now)
	s.mu.Unlock()
	s.lines.notify(key, woken)
	return nil
}

// TTL implements Store.
func (s *Store) TTL(_ context.Context, key, token string) (time.Duration, error) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.held(key, token, now) {
		return 0, store.ErrNotHeld
	}
	return s.locks[key].expires.Sub(now), nil
}

// Delete removes a key whoever holds it, as an operator (or a test playing a
// crash) would; the holder finds out at its next renewal.
//
// An entry whose lease had run out goes as a sweep drops it: its holder is
// told, as it would be by the next caller to take the key.
func (s *Store) Delete(key string) {
	s.mu.Lock()
	cur, ok := s.locks[key]
	delete(s.locks, key)
	var lapsed []func()
	if ok && cur.lapse != nil && !time.Now().Before(cur.expires) {
		lapsed = lapseInto(cur.lapse, nil)
	}
	s.mu.Unlock()
	finishLapses(lapsed)
}

// Kind implements Kinder.
func (*Store) Kind() string { return "memory" }

// lapseInto fires n, under the store's mutex, and adds the rest of the loss
// to finish, for finishLapses once the mutex is let go.
func lapseInto(n store.LapseNotice, finish []func()) []func() {
	if f := n.Lapse(); f != nil {
		finish = append(finish, f)
	}
	return finish
}

// finishLapses finishes the losses lapseInto marked; the store calls it
// once it has let go of its mutex, and before it answers.
func finishLapses(finish []func()) {
	for _, f := range finish {
		f()
	}
}
