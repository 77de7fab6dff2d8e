package store

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrNotObtained means someone else holds the lock. The error is a
	// *NotObtainedError, which says how long the holder's lease still runs.
	ErrNotObtained = errors.New("reqlock: lock not obtained")

	// ErrNotHeld is what Refresh, Release and TTL return for a lock that is no
	// longer ours: released already, expired, or taken by someone else since.
	ErrNotHeld = errors.New("reqlock: lock not held")

	// ErrStoreClosed is wrapped by a store's error when its client was
	// closed: nothing sent on it can land any more, so an undo of an
	// acquire made through it need not be retried.
	ErrStoreClosed = errors.New("reqlock: store client closed")

	// ErrNoInspect is returned by Locker.Inspect when the Locker's store does
	// not implement Inspector.
	ErrNoInspect = errors.New("reqlock: the store cannot be inspected (it does not implement store.Inspector)")

	// ErrNoRecords is returned by the record calls of a Locker whose store
	// cannot keep records: redisstore.Store and memorystore.Store can; redlock.Store
	// cannot, since a record read from one majority may be missing from the
	// next.
	ErrNoRecords = errors.New("reqlock: the store does not keep records (redisstore.Store and memorystore.Store do, redlock.Store does not)")
)

// NotObtainedError is the error for a lock someone else holds.
// errors.Is(err, ErrNotObtained) is true for it; when Obtain stopped waiting
// because its context ended, errors.Is(err, context.DeadlineExceeded) (or
// context.Canceled) is true as well.
type NotObtainedError struct {
	// Remaining is how long the holder's lease ran when last seen; 0 when the
	// store could not say. It is an upper bound on the wait only if the
	// holder does not renew.
	Remaining time.Duration
	// Cause is the context error that ended the wait, or nil.
	Cause error

	// LastFence is the last fence the store had handed out for the key
	// when it turned a waiter in line away, 0 when unknown. A store that
	// hands locks over (Granter) sets it, so that the waiter can tell a
	// hand-off that came after this answer (a larger fence) from one that
	// ran out before it.
	LastFence uint64
}

func (e *NotObtainedError) Error() string {
	msg := ErrNotObtained.Error()
	if e.Remaining > 0 {
		msg += fmt.Sprintf(" (held for another %v)", e.Remaining.Round(time.Millisecond))
	}
	if e.Cause != nil {
		msg += ": " + e.Cause.Error()
	}
	return msg
}

// Is makes errors.Is(err, ErrNotObtained) true.
func (e *NotObtainedError) Is(target error) bool { return target == ErrNotObtained }

// Unwrap returns the context error that ended the wait, if any.
func (e *NotObtainedError) Unwrap() error { return e.Cause }
