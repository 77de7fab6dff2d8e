package core

import (
	"context"
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

	// ErrLockLost is the context.Cause of a context from Do or Lock.WithContext
	// once the lock is known to be gone while still in use.
	ErrLockLost = errors.New("reqlock: lock lost")

	// ErrEmptyKey is returned for an empty lock key.
	ErrEmptyKey = errors.New("reqlock: empty key")

	// ErrUnavailable wraps every failure of the store itself (unreachable,
	// timed out, a script error), as opposed to an answer from it.
	ErrUnavailable = errors.New("reqlock: store unavailable")
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

	// lastFence is the last fence the store had handed out when it turned
	// a waiter in line away, 0 when unknown: a hand-off with a larger fence
	// came after (see Locker.wait).
	lastFence uint64
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

// HolderTTL reports how long the current holder's lease still runs, taken
// from a not-obtained error; ok is false for any other error or when the
// store could not say.
func HolderTTL(err error) (remaining time.Duration, ok bool) {
	var no *NotObtainedError
	if errors.As(err, &no) && no.Remaining > 0 {
		return no.Remaining, true
	}
	return 0, false
}

// ctxErr is ctx.Err(), also when the deadline has passed but the context's
// own timer has not fired yet: go-redis puts the same deadline on the socket,
// and its i/o timeout can win that race.
func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return nil
}

// unavailable wraps a store failure so that both ErrUnavailable and, when the
// caller's context ended meanwhile, the context error can be tested for.
func unavailable(op string, ctxErr, err error) error {
	if ctxErr != nil && !errors.Is(err, ctxErr) {
		return fmt.Errorf("%w: %s: %w: %w", ErrUnavailable, op, ctxErr, err)
	}
	return fmt.Errorf("%w: %s: %w", ErrUnavailable, op, err)
}
