package core

import (
	"context"
	"errors"
	"time"

	"github.com/reqlock/reqlock/core/store"
)

// unitRecorder returns l's store as a UnitRecorder when it runs work in
// units (pgstore.WithTx), else nil.
func (l *Locker) unitRecorder() store.UnitRecorder {
	if u, ok := l.store.(store.UnitRecorder); ok && u.RecordsInUnit() {
		return u
	}
	return nil
}

// onceInUnit is Once's run on a store that runs it in a unit that commits
// with the record: fn's writes through the unit and its record land
// together, so no run is ever in doubt and none is marked.
func (l *Locker) onceInUnit(ctx, lctx context.Context, lk *Lock, retention time.Duration,
	fn func(context.Context) ([]byte, error)) (Outcome, error) {
	var (
		out  Outcome
		ferr error
	)
	recorded := false // the unit's commit released the lock
	defer func() {
		if !recorded {
			_ = lk.ReleaseDetached(ctx)
		}
	}()
	recorded, err := lk.RecordInUnit(lctx, retention, func(uctx context.Context) []byte {
		out.Value, ferr = fn(uctx)
		var final *finalError
		if ferr != nil && !errors.As(ferr, &final) {
			return nil // rolled back: not recorded
		}
		return encodeOutcome(out.Value, ferr)
	})
	switch {
	case recorded:
		return out, ferr
	case errors.Is(err, ErrLockLost):
		return out, joinErrors(ferr, ErrLockLost)
	case err != nil:
		return out, joinErrors(ferr, err)
	case lk.isLost():
		return out, joinErrors(ferr, ErrLockLost)
	}
	return out, ferr
}

// endedInUnit is the end of lk's hold by the commit of a unit, which
// released it in the store.
func (lk *Lock) endedInUnit() {
	lk.mu.Lock()
	if lk.released {
		lk.mu.Unlock()
		return
	}
	lk.released = true
	lost := lk.lost
	lk.mu.Unlock()
	l := lk.locker
	if !lost && lk.tel != nil {
		l.telemetry.holdEnded(lk, holdReleased)
	}
	l.dog.remove(lk)
	l.wakeLocal(lk.skey)
}
