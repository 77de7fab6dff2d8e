package memorystore

import (
	"context"
	"time"

	"github.com/reqlock/reqlock/core/store"
)

// WithUnits has Once run its function in a unit of s (store.UnitRecorder):
// while it runs, nobody takes the key from it, even past its lease, and
// its record is written only if its lease still runs when it returns. A
// process's memory has no transaction to roll back, so this gives the
// function's effects no more than that; it is what lets a test of a store
// contract, or of code written for pgstore.WithTx, run in one process. It
// returns s.
func (s *Store) WithUnits() *Store {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unitsOn = true
	return s
}

// RecordsInUnit implements store.UnitRecorder: after WithUnits.
func (s *Store) RecordsInUnit() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unitsOn
}

// RunInUnit implements store.UnitRecorder.
func (s *Store) RunInUnit(ctx context.Context, key, token string, fence uint64, retention time.Duration, work func(context.Context) []byte) error {
	now := time.Now()
	s.mu.Lock()
	if !s.held(key, token, now) || s.locks[key].fence != fence || s.units[key] != "" {
		s.mu.Unlock()
		return store.ErrNotHeld
	}
	if s.units == nil {
		s.units = make(map[string]string)
	}
	s.units[key] = token
	s.mu.Unlock()
	open := true
	defer func() { // rolled back: the key is the lease's again
		if open {
			s.mu.Lock()
			delete(s.units, key)
			s.mu.Unlock()
		}
	}()
	record := work(ctx)
	if record == nil {
		return nil
	}
	now = time.Now()
	s.mu.Lock()
	open = false
	delete(s.units, key)
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

// unitHolds reports whether a unit of a token other than token is open on
// key: then key is not taken, even past its lease. The caller holds mu.
func (s *Store) unitHolds(key, token string) bool {
	u := s.units[key]
	return u != "" && u != token
}
