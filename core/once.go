package core

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/reqlock/reqlock/core/store"
)

// Outcome is what Once hands back: the value fn returned, or, when Replayed,
// the value the first run recorded.
type Outcome struct {
	Value    []byte
	Replayed bool // fn did not run: Value (and the error, if any) are the first run's
	// InDoubt: the run before this one lost its lock without a record, so
	// whether its effect landed is unknown. With RunAgain fn ran all the
	// same; with RefuseInDoubt it did not, and the error is ErrInDoubt.
	InDoubt bool
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

// Once runs fn for key and records what it returned, so that later callers
// get the record instead of running fn again: once per key within
// retention (DefaultRetention when 0), across every process on the store.
// The first caller runs fn under the lock for key and records its result in
// the same round trip as the release; callers while it runs wait for it, as
// Obtain does, and get its record; callers later, until the retention
// ends, get the record at once. It gives a queue consumer or a cron job the
// guarantee an idempotency key gives an HTTP request.
//
// What is recorded: a nil error with its value, or a Final error. Not
// recorded, so that the next caller runs fn again: any other error.
//
// How many times fn's effect lands depends on where it lives:
//   - In the store's own database, through a unit the store runs fn in
//     (pgstore.WithTx, store.UnitRecorder): exactly once. fn's writes and
//     the record commit together, or neither does, and a holder that lost
//     its lock cannot commit.
//   - Elsewhere: a run that lost its lock before its record (a crash, a
//     pause past its lease, a store that lost the lock), that panicked, or
//     that failed once ctx had ended (its caller gone mid-call), leaves its
//     outcome unknown. The store remembers that it started
//     (store.RunMarker), and the next holder is told: Outcome.InDoubt, and
//     with RefuseInDoubt (WithDoubtPolicy) no run but ErrInDoubt; with
//     RunAgain, the default, fn runs again: at least once.
//
// A run whose lock was lost returns an error that is ErrLockLost and fn's
// own error, if any. ctx bounds the wait; fn's context carries the lock and
// ends with ErrLockLost if it is lost. The store must keep records
// (ErrNoRecords).
func (l *Locker) Once(ctx context.Context, key string, retention time.Duration, fn func(context.Context) ([]byte, error)) (Outcome, error) {
	if _, err := l.recorder(); err != nil {
		return Outcome{}, err
	}
	if retention <= 0 {
		retention = DefaultRetention
	}
	unit := l.unitRecorder()
	marker, marks := l.store.(store.RunMarker)
	if unit == nil && !marks && l.doubt == RefuseInDoubt {
		return Outcome{}, ErrNoRunMarks
	}
	octx := ctx
	if marks && unit == nil && l.marksOnAcquire {
		octx = ContextWithRunMark(ctx, retention, l.doubt) // the mark rides on the acquire
	}
	lk, rec, err := l.ObtainOrRecord(octx, key)
	if err != nil {
		return Outcome{}, err
	}
	if rec != nil {
		return decodeOutcome(rec)
	}
	lctx, cancel := lk.WithContext(ctx)
	defer cancel()
	if unit != nil {
		return l.onceInUnit(ctx, lctx, lk, retention, fn)
	}
	var out Outcome
	if marks {
		if out.InDoubt, err = l.markRun(ctx, lk, marker, retention, l.doubt); err != nil {
			_ = lk.ReleaseDetached(ctx)
			return out, err
		}
	}
	// clean: fn returned an error that is not recorded, with the lock
	// still ours and its caller still waiting: its run left nothing in
	// doubt. A panic is not clean.
	// A run again over a run in doubt settles nothing by failing: the
	// mark stays, so that the next holder is told too.
	clean, recorded := false, false
	defer func() {
		if recorded {
			return
		}
		if clean && marks && !out.InDoubt {
			lk.unmarkRun(ctx, marker)
		}
		_ = lk.ReleaseDetached(ctx)
	}()
	value, ferr := fn(lctx)
	out.Value = value
	var final *finalError
	if ferr != nil && !errors.As(ferr, &final) {
		if lk.isLost() {
			return out, joinErrors(ferr, ErrLockLost)
		}
		// Cut short by its caller's context (a deadline, a client gone),
		// fn may have failed half-way: as much in doubt as a lost lock.
		clean = ctx.Err() == nil
		return out, ferr
	}
	recorded = true
	rctx, stop := context.WithTimeout(context.WithoutCancel(ctx), l.releaseTimeout())
	defer stop()
	switch err := lk.ReleaseRecording(rctx, encodeOutcome(value, ferr), retention); {
	case errors.Is(err, ErrNotHeld):
		return out, joinErrors(ferr, ErrLockLost)
	case err != nil:
		return out, joinErrors(ferr, err)
	}
	return out, ferr
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
