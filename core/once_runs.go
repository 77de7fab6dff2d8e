package core

import (
	"context"
	"errors"
	"time"

	"github.com/reqlock/reqlock/core/store"
)

// markRun marks the run lk is about to start (store.RunMarker) and reports
// whether the run before it is in doubt. Under RefuseInDoubt (p) a run in
// doubt is ErrInDoubt; under RunAgain it is logged and the run goes ahead.
// When lk's acquire marked the run already, as asked here, its answer
// stands, without a round trip.
func (l *Locker) markRun(ctx context.Context, lk *Lock, m store.RunMarker, retention time.Duration, p DoubtPolicy) (bool, error) {
	again := p == RunAgain
	doubt, answered := lk.startRun(retention, again)
	if answered && !lk.valid(time.Now()) {
		// MarkRun's own round trip checked the token right before the run.
		// Without one, the lease by our clock stands in: an acquire
		// answered late, or a pause since, may have let the key go to
		// another holder. The acquire's mark stays: the next holder thinks
		// a run in doubt, which is safe.
		return false, ErrLockLost
	}
	if !answered {
		marked, err := m.MarkRun(ctx, lk.skey, lk.token, retention, again)
		switch {
		case errors.Is(err, ErrNotHeld):
			return false, ErrLockLost
		case err != nil:
			if !again {
				lk.settleUnansweredMark(ctx, m, retention)
			}
			return false, unavailable("mark run", ctxErr(ctx), err)
		}
		doubt = doubt || marked
	}
	switch {
	case !doubt:
		return false, nil
	case !again:
		return true, ErrInDoubt
	}
	l.log.Warn("reqlock: the last run of the key lost its lock without a record; running it again",
		"reqlock.key", lk.key, "reqlock.fence", lk.fence)
	return true, nil
}

// unmarkRun clears the mark of lk's run, which ended cleanly without a
// record. A mark that stays (the store did not answer) only makes the next
// holder think the run in doubt: safe, if needlessly cautious.
func (lk *Lock) unmarkRun(ctx context.Context, m store.RunMarker) {
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lk.locker.releaseTimeout())
	defer cancel()
	_ = m.UnmarkRun(uctx, lk.skey, lk.token)
}

// settleUnansweredMark takes away the mark a MarkRun (without again) may
// have left though its answer was lost: the run never starts, and its mark
// would refuse the key for the whole retention. Asked again, MarkRun tells
// whether the mark there is lk's own (or none: it is lk's now), which is
// then cleared, or another run's in doubt, which stays as it is. Under
// RunAgain the lost MarkRun may have replaced another run's mark, so that
// "lk's own" would not mean "no doubt": there the mark is left.
func (lk *Lock) settleUnansweredMark(ctx context.Context, m store.RunMarker, retention time.Duration) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lk.locker.releaseTimeout())
	defer cancel()
	if doubt, err := m.MarkRun(sctx, lk.skey, lk.token, retention, false); err == nil && !doubt {
		_ = m.UnmarkRun(sctx, lk.skey, lk.token)
	}
}
