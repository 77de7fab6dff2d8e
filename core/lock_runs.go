package core

import (
	"context"
	"errors"
	"time"

	"github.com/reqlock/reqlock/core/store"
)

// The pieces Once is made of, for a caller that records its runs in a form
// of its own (httplock's Replay records responses) and must still run in
// the store's unit, or tell a run in doubt, as Once does.

// ErrNoUnits is returned by Lock.RecordInUnit when the Locker's store runs
// no units: it does not implement store.UnitRecorder, or was not set up
// to (pgstore.WithTx).
var ErrNoUnits = errors.New("reqlock: the store runs no units (pgstore.WithTx, store.UnitRecorder)")

// MarksRuns reports whether l's store marks runs (store.RunMarker), so that
// a caller can refuse RefuseInDoubt at start-up on a store that cannot
// tell a run in doubt.
func (l *Locker) MarksRuns() bool {
	_, ok := l.store.(store.RunMarker)
	return ok
}

// RecordsInUnit reports whether l's store runs a holder's work in a unit
// that commits with its record (pgstore.WithTx): then Once, and a caller
// of Lock.RecordInUnit, leaves no run in doubt.
func (l *Locker) RecordsInUnit() bool { return l.unitRecorder() != nil }

// MarkRun marks the run lk's holder is about to start, kept for retention
// (DefaultRetention when 0), and reports whether the run before it is in
// doubt: it lost its lock without a record, so whether its effect landed
// is unknown. Under RefuseInDoubt (p, or the Locker's WithDoubtPolicy) a
// run in doubt is ErrInDoubt and the old mark stays; under RunAgain it is
// logged and replaced by this run's. ErrLockLost when lk no longer holds
// its key, ErrNoRunMarks when the store marks no runs. The run's mark goes
// with its record (ReleaseRecording), or with UnmarkRun when it ended
// cleanly without one; any other end leaves it for the next holder. A lock
// taken under ContextWithRunMark with the same retention and policy was
// marked by its acquire: MarkRun answers what that found, without a round
// trip.
func (lk *Lock) MarkRun(ctx context.Context, retention time.Duration, p DoubtPolicy) (inDoubt bool, err error) {
	if lk == nil {
		return false, ErrNotHeld
	}
	m, ok := lk.locker.store.(store.RunMarker)
	if !ok {
		return false, ErrNoRunMarks
	}
	if retention <= 0 {
		retention = DefaultRetention
	}
	if lk.locker.doubt == RefuseInDoubt {
		p = RefuseInDoubt
	}
	return lk.locker.markRun(ctx, lk, m, retention, p)
}

// UnmarkRun clears the mark of lk's run, which ended cleanly without a
// record (its failure left nothing behind). A mark that stays (the store
// did not answer) only makes the next holder think the run in doubt. Not
// after a MarkRun that found the run before in doubt: a run again that
// failed settled nothing, and its mark must stay for the next holder.
func (lk *Lock) UnmarkRun(ctx context.Context) {
	if lk == nil {
		return
	}
	if m, ok := lk.locker.store.(store.RunMarker); ok {
		lk.unmarkRun(ctx, m)
	}
}

// RecordInUnit runs work in a unit of the store (pgstore.WithTx: a
// transaction that pgstore.Tx finds on work's context), and commits the
// record work returns, kept for retention (DefaultRetention when 0),
// together with work's writes through the unit and the release of lk:
// recorded is true when that commit landed, and lk is then released. A
// nil record, or ctx ended, rolls the unit back, and lk stays held for the
// caller to release. While the unit is open no other holder takes the key,
// even past the lease.
//
// ErrLockLost when lk lost its key before the commit: nothing of the unit
// landed. Any other error is the store's (ErrUnavailable): whether the
// commit landed is unknown, and the key's record tells the next holder.
// ErrNoUnits when the store runs none. A panic in work rolls the unit back
// and goes on up.
func (lk *Lock) RecordInUnit(ctx context.Context, retention time.Duration, work func(context.Context) []byte) (recorded bool, err error) {
	if lk == nil {
		return false, ErrNotHeld
	}
	l := lk.locker
	u := l.unitRecorder()
	if u == nil {
		return false, ErrNoUnits
	}
	if retention <= 0 {
		retention = DefaultRetention
	}
	offered := false // a record was handed to the unit to commit
	err = u.RunInUnit(ctx, lk.skey, lk.token, lk.fence, retention, func(uctx context.Context) []byte {
		record := work(uctx)
		if record == nil || ctx.Err() != nil {
			return nil // rolled back: not to be recorded, or the lock is lost
		}
		// The watchdog lets go of the lock now, so that a renewal does not
		// wait on the commit's row lock and then find the lock gone: the
		// store checks the lease itself as it commits.
		l.dog.remove(lk)
		offered = true
		return record
	})
	switch {
	case err == nil && offered:
		lk.endedInUnit()
		return true, nil
	case errors.Is(err, ErrNotHeld), lk.isLost():
		return false, ErrLockLost
	case err != nil:
		return false, unavailable("record", ctxErr(ctx), err)
	}
	return false, nil
}
