package core

import (
	"context"
	"time"

	"github.com/reqlock/reqlock/core/store"
)

// A first run of a recorded key costs three round trips when its mark is
// one of its own: the acquire (which looks for the record), the mark, and
// the release with the record. A store that implements
// store.AcquireMarker marks the run in the acquire's round trip instead,
// when the caller says beforehand how it will mark it (ContextWithRunMark;
// Once does so itself).

// runMarkAsk is what ContextWithRunMark puts on a context.
type runMarkAsk struct {
	retention time.Duration
	policy    DoubtPolicy
}

type runMarkKey struct{}

// ContextWithRunMark makes the record calls under the returned context
// (TryObtainOrRecord, ObtainOrRecord, ObtainOrRecordAfter) mark the run of
// the lock they take as Lock.MarkRun(ctx, retention, p) would, in the
// acquire's own round trip, on a store that can (store.AcquireMarker);
// Lock.MarkRun with the same retention and policy then answers without a
// round trip. Until that MarkRun the run has not started: a lock released
// before it takes back the mark its acquire made. On a store that cannot,
// nothing changes: MarkRun marks in a round trip of its own.
func ContextWithRunMark(ctx context.Context, retention time.Duration, p DoubtPolicy) context.Context {
	if retention <= 0 {
		retention = DefaultRetention
	}
	return context.WithValue(ctx, runMarkKey{}, runMarkAsk{retention, p})
}

// runMarkFrom is the mark an acquire under ctx asks the store for: none
// unless ContextWithRunMark asked for one. The Locker's RefuseInDoubt
// overrides the policy asked for, as in Lock.MarkRun.
func (l *Locker) runMarkFrom(ctx context.Context) store.RunMark {
	ask, ok := ctx.Value(runMarkKey{}).(runMarkAsk)
	if !ok {
		return store.RunMark{}
	}
	return store.RunMark{Retention: ask.retention, Again: ask.policy == RunAgain && l.doubt != RefuseInDoubt}
}

// acquiredMark is the mark an acquire made of its lock's run.
type acquiredMark struct {
	retention time.Duration // 0: the acquire marked nothing
	again     bool
	doubt     bool // the run before was in doubt: its mark stays
	started   bool // MarkRun was answered: the run is under way (guarded by Lock.mu)
}

// startRun notes that lk's run starts, and returns what its acquire's
// mark said: answered when that mark was made with this retention and
// again, so that it stands for MarkRun's.
func (lk *Lock) startRun(retention time.Duration, again bool) (doubt, answered bool) {
	lk.mu.Lock()
	defer lk.mu.Unlock()
	m := &lk.mark
	if m.retention == 0 {
		return false, false
	}
	m.started = true
	return m.doubt, m.retention == retention && m.again == again
}

// unstartedMark reports whether lk's acquire left a mark of its own for a
// run that never started, which its release must take back; the caller
// holds lk.mu.
func (lk *Lock) unstartedMark() bool {
	m := &lk.mark
	return m.retention > 0 && !m.started && !m.doubt && !lk.lost
}

// dropMark takes back the mark lk's acquire made for a run that never
// started. A mark that stays (the store did not answer) only makes the next
// holder think a run in doubt.
func (lk *Lock) dropMark(ctx context.Context) {
	if m, ok := lk.locker.store.(store.RunMarker); ok {
		_ = m.UnmarkRun(ctx, lk.skey, lk.token)
	}
}
