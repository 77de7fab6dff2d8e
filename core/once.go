package core

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Outcome is what Once hands back: the value fn returned, or, when Replayed,
// the value the first run recorded.
type Outcome struct {
	Value    []byte
	Replayed bool // fn did not run: Value (and the error, if any) are the first run's
}

// Final marks an error of fn as the answer itself, not a failure to get one
// (a card declined, an order refused): Once records it like a value, and
// later callers get it back as a *RecordedError. Errors not marked Final are
// not recorded: the key stays free, so a retry runs fn again.
func Final(err error) error {
	if err == nil {
		return nil
	}
	return &finalError{err}
}

type finalError struct{ err error }

func (e *finalError) Error() string { return e.err.Error() }
func (e *finalError) Unwrap() error { return e.err }

// ErrRecorded is matched (errors.Is) by the *RecordedError a replayed Final
// error comes back as.
var ErrRecorded = errors.New("reqlock: recorded failure")

// RecordedError is a Final error of the first run of fn, handed to a later
// caller of Once. Only its message survives the store.
type RecordedError struct{ Message string }

func (e *RecordedError) Error() string        { return e.Message }
func (e *RecordedError) Is(target error) bool { return target == ErrRecorded }

// Once runs fn at most once per key within retention (DefaultRetention when
// 0), across every process on the store: the first caller runs it under the
// lock for key and records what it returned, in the same round trip as the
// release; callers while it runs wait for it, as Obtain does, and get its
// record; callers later, until the retention ends, get the record at once.
// It gives a queue consumer or a cron job the guarantee an idempotency key
// gives an HTTP request.
//
// What is recorded: a nil error with its value, or a Final error. Not
// recorded, so that the next caller runs fn again: any other error, a
// panic (which goes on up after the lock is released), and a run whose lock
// was lost before the record was written (the error is then ErrLockLost
// too, and another caller may have run fn meanwhile: fence what fn writes).
// ctx bounds the wait; fn's context carries the lock and ends with
// ErrLockLost if it is lost. The store must keep records (ErrNoRecords).
func (l *Locker) Once(ctx context.Context, key string, retention time.Duration, fn func(context.Context) ([]byte, error)) (Outcome, error) {
	lk, rec, err := l.ObtainOrRecord(ctx, key)
	if err != nil {
		return Outcome{}, err
	}
	if rec != nil {
		return decodeOutcome(rec)
	}
	lctx, cancel := lk.WithContext(ctx)
	recorded := false
	defer func() {
		cancel()
		if !recorded { // fn failed or panicked: free the key for a retry
			_ = lk.ReleaseDetached(ctx)
		}
	}()
	value, ferr := fn(lctx)
	var final *finalError
	if ferr != nil && !errors.As(ferr, &final) {
		return Outcome{Value: value}, ferr
	}
	recorded = true
	rctx, stop := context.WithTimeout(context.WithoutCancel(ctx), l.releaseTimeout())
	defer stop()
	switch err := lk.ReleaseRecording(rctx, encodeOutcome(value, ferr), retention); {
	case errors.Is(err, ErrNotHeld):
		return Outcome{Value: value}, errors.Join(ferr, ErrLockLost)
	case err != nil:
		return Outcome{Value: value}, errors.Join(ferr, err)
	}
	return Outcome{Value: value}, ferr
}

// A recorded outcome: one byte of kind, then for a failure the length of its
// message (4 bytes, big-endian) and the message, then the value.
const (
	outcomeValue  byte = 'v'
	outcomeFailed byte = 'f'
)

func encodeOutcome(value []byte, ferr error) []byte {
	if ferr == nil {
		return append([]byte{outcomeValue}, value...)
	}
	msg := ferr.Error()
	b := make([]byte, 0, 5+len(msg)+len(value))
	b = append(b, outcomeFailed)
	b = binary.BigEndian.AppendUint32(b, uint32(len(msg)))
	b = append(b, msg...)
	return append(b, value...)
}

// errBadRecord is a record Once did not write (another user of the same
// key and store, or a damaged value).
var errBadRecord = errors.New("reqlock: the key's record is not an outcome of Once")

func decodeOutcome(rec []byte) (Outcome, error) {
	if len(rec) == 0 {
		return Outcome{}, errBadRecord
	}
	switch rec[0] {
	case outcomeValue:
		return Outcome{Value: rec[1:], Replayed: true}, nil
	case outcomeFailed:
		if len(rec) < 5 {
			return Outcome{}, errBadRecord
		}
		n := binary.BigEndian.Uint32(rec[1:5])
		if uint64(n) > uint64(len(rec)-5) {
			return Outcome{}, errBadRecord
		}
		return Outcome{Value: rec[5+n:], Replayed: true}, &RecordedError{Message: string(rec[5 : 5+n])}
	}
	return Outcome{}, fmt.Errorf("%w: kind %q", errBadRecord, rec[0])
}
