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
func (l *Locker) onceInUnit(ctx, lctx context.Context, lk *Lock, u store.UnitRecorder, retention time.Duration,
	fn func(context.Context) ([]byte, error)) (Outcome, error) {
	var (
		out     Outcome
		ferr    error
		offered bool // a record was handed to the unit to commit
	)
	ended := false // the unit's commit released the lock
	defer func() {
		if !ended {
			_ = lk.ReleaseDetached(ctx)
		}
	}()
	err := u.RunInUnit(lctx, lk.skey, lk.token, lk.fence, retention, func(uctx context.Context) []byte {
		out.Value, ferr = fn(uctx)
		var final *finalError
		if ferr != nil && !errors.As(ferr, &final) || lctx.Err() != nil {
			return nil // rolled back: not recorded, or the lock is lost
		}
		// The watchdog lets go of the lock now, so that a renewal does not
		// wait on the commit's row lock and then find the lock gone: the
		// store checks the lease itself as it commits.
		l.dog.remove(lk)
		offered = true
		return encodeOutcome(out.Value, ferr)
	})
	switch {
	case err == nil && offered:
		ended = true
		lk.endedInUnit()
		return out, ferr
	case errors.Is(err, ErrNotHeld), lk.isLost():
		return out, joinErrors(ferr, ErrLockLost)
	case err != nil:
		return out, joinErrors(ferr, unavailable("record", ctxErr(ctx), err))
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
