package store

import (
	"context"
	"time"
)

// UnitRecorder is implemented by stores that can run the holder's work in a
// unit of their own (a database transaction) that commits together with the
// work's record: the work's writes in the unit and the record land
// together or not at all. Such a store keeps records (Recorder).
type UnitRecorder interface {
	// RecordsInUnit reports whether the store was set up to run work in
	// units (pgstore.WithTx): a store may offer them only as an option.
	RecordsInUnit() bool
	// RunInUnit begins a unit for the holder of key (token, with fence)
	// and runs work in it, with a context that carries the unit (the store
	// says how its user reaches it). It checks first that token holds key
	// with fence: ErrNotHeld, and work does not run, when it does not.
	// While the unit is open no other token takes key, even once the
	// lease has run out.
	//
	// A record from work (not nil) is written, kept for retention, and the
	// lock released, in the unit, which then commits: only if token still
	// holds key with its lease running, else ErrNotHeld and nothing of the
	// unit lands (the lock stays as it is). A nil record rolls the unit
	// back, and the lock stays held by token for the caller to release.
	// Any other error is the store's: whether the commit landed is then
	// unknown, and the record tells (it landed with the unit, or neither
	// did). A panic in work rolls the unit back and goes on up.
	RunInUnit(ctx context.Context, key, token string, fence uint64, retention time.Duration, work func(ctx context.Context) []byte) error
}
