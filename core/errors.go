package core

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reqlock/reqlock/core/store"
)

var (
	// ErrLockLost is the context.Cause of a context from Do or Lock.WithContext
	// once the lock is known to be gone while still in use.
	ErrLockLost = errors.New("reqlock: lock lost")

	// ErrEmptyKey is returned for an empty lock key.
	ErrEmptyKey = errors.New("reqlock: empty key")

	// ErrUnavailable wraps every failure of the store itself (unreachable,
	// timed out, a script error), as opposed to an answer from it.
	ErrUnavailable = errors.New("reqlock: store unavailable")
)

// HolderTTL reports how long the current holder's lease still runs, taken
// from a not-obtained error; ok is false for any other error or when the
// store could not say.
func HolderTTL(err error) (remaining time.Duration, ok bool) {
	var no *store.NotObtainedError
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
