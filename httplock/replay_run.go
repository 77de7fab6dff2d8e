package httplock

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/reqlock/reqlock/core"
)

// errNotRecordable is why a response held for the store's transaction
// could not be committed with it: its status is one to record, but its
// body outgrew the bound, or the handler broke it off.
var errNotRecordable = errors.New("reqlock: the response could not be recorded")

// runRecorded runs next under lk, a fresh lock on a key without a record,
// and records its response: in the store's transaction when the store runs
// one (pgstore.WithTx), else in the release's round trip, with the run
// marked meanwhile when the store marks runs, so that a run that loses its
// lock without a record is in doubt for the next request (InDoubt).
func (e *Engine) runRecorded(ctx context.Context, w http.ResponseWriter, scope string, lk *core.Lock, fingerprint []byte,
	next func(context.Context, http.ResponseWriter) error, o *observation) (bool, *Rejection) {
	if e.cfg.Locker.RecordsInUnit() {
		return e.runInUnit(ctx, w, scope, lk, fingerprint, next, o)
	}
	rp := e.replay
	marked, inDoubt := e.cfg.Locker.MarksRuns(), false
	if marked {
		var (
			rej      *Rejection
			failOpen bool
		)
		switch rej, failOpen, inDoubt = e.markRun(ctx, scope, lk); {
		case rej != nil:
			return false, rej
		case failOpen:
			if o != nil {
				o.outcome, o.w = OutcomeFailOpen, w
			}
			_ = next(ctx, w) // unlocked: there is nothing to record
			return false, nil
		}
	}
	lctx, cancel := lk.WithContext(ctx)
	c := newCapture(w, rp)
	if o != nil {
		o.outcome, o.w = OutcomeLocked, c
	}
	answered, failed := false, false
	defer func() {
		lost := errors.Is(context.Cause(lctx), core.ErrLockLost)
		if o != nil && lost {
			o.outcome = OutcomeLockLost
		}
		cancel()
		var resp *response
		if answered {
			resp = c.response(rp, fingerprint)
		}
		switch {
		case resp != nil:
			// The record takes the run's mark with it.
			e.releaseRecording(ctx, lk, scope, resp)
			return
		case marked && !inDoubt && !lost && (failed || answered && c.sendable(rp)):
			// A failure the handler answered, which says "try again",
			// or a run's own failure (ServeRecorded): its run left
			// nothing in doubt. A run again over a run in doubt settled
			// nothing by failing: its mark stays.
			lk.UnmarkRun(ctx)
		}
		// A panic, a response broken off, streamed or too long to
		// record, a lock lost: the mark stays, the run is in doubt.
		e.release(ctx, lk, scope)
	}()
	err := next(lctx, c)
	answered, failed = err == nil, failedCleanly(err)
	return false, nil
}

// markRun marks lk's run before the handler starts (core.Lock.MarkRun):
// on a store that marks as it acquires, the acquire did (see acquire), and
// this only reads its answer. A
// run before it in doubt is logged and run again under core.RunAgain, and
// refused under core.RefuseInDoubt: lk is released, its mark left for the
// next request, and the request gets ErrInDoubt. A store that fails to mark
// is a store that fails: lk is released, and the request gets 503, or,
// failOpen, runs unlocked.
func (e *Engine) markRun(ctx context.Context, scope string, lk *core.Lock) (rej *Rejection, failOpen, inDoubt bool) {
	mctx, cancel := context.WithTimeout(ctx, e.cfg.StoreTimeout)
	inDoubt, err := lk.MarkRun(mctx, e.replay.retention, e.replay.doubt)
	cancel()
	switch {
	case err == nil:
		return nil, false, inDoubt
	case errors.Is(err, core.ErrInDoubt):
		e.release(ctx, lk, scope)
		return reject(ErrInDoubt, err, 0), false, true
	case errors.Is(err, core.ErrLockLost):
		e.release(ctx, lk, scope)
		return e.lostBeforeRun(err), false, false
	}
	e.release(ctx, lk, scope)
	_, rej = e.storeFailed(ctx, scope, err)
	return rej, rej == nil, false
}

// runInUnit runs next in the store's transaction (core.Lock.RecordInUnit),
// which commits its writes through pgstore.Tx(ctx) together with the
// response's record and the release of lk. The response is held back until
// then: a client must not get an answer whose effect was rolled back.
//
// Not recorded, so rolled back: a status RecordStatus refuses (the held
// response goes out as it is), a body over MaxResponseBody or a response
// the handler broke off (500 not_committed), a hijacked connection, a
// panic. A commit that failed is 503 not_committed: the retry gets the
// response if it landed after all, or runs again.
func (e *Engine) runInUnit(ctx context.Context, w http.ResponseWriter, scope string, lk *core.Lock, fingerprint []byte,
	next func(context.Context, http.ResponseWriter) error, o *observation) (bool, *Rejection) {
	rp := e.replay
	lctx, cancel := lk.WithContext(ctx)
	defer cancel()
	c := newCapture(w, rp)
	c.hold()
	if o != nil {
		o.outcome, o.w = OutcomeLocked, c
	}
	recorded := false // the commit released lk
	defer func() {
		if !recorded { // a panic too
			e.release(ctx, lk, scope)
		}
	}()
	ran, failed := false, false
	recorded, err := lk.RecordInUnit(lctx, rp.retention, func(uctx context.Context) []byte {
		ran = true
		if err := next(uctx, c); err != nil {
			failed = failedCleanly(err)
			return nil // broken off, or failed: no answer to record
		}
		if resp := c.response(rp, fingerprint); resp != nil {
			return resp.encode()
		}
		return nil
	})
	if o != nil && errors.Is(context.Cause(lctx), core.ErrLockLost) {
		o.outcome = OutcomeLockLost
	}
	switch {
	case recorded:
		c.send()
		return false, nil
	case c.hijacked:
		return false, nil // the handler has the connection
	case clientGone(ctx):
		return false, reject(ErrClientGone, ctx.Err(), 0)
	case err != nil && !ran && errors.Is(err, core.ErrLockLost):
		e.release(ctx, lk, scope)
		return false, e.lostBeforeRun(err)
	case err != nil && !ran:
		// The transaction did not begin: the handler did not run, as when
		// the store fails at the acquire.
		e.release(ctx, lk, scope)
		if _, rej := e.storeFailed(ctx, scope, err); rej != nil {
			return false, rej
		}
		if o != nil {
			o.outcome, o.w = OutcomeFailOpen, w
		}
		_ = next(ctx, w) // unlocked: there is nothing to record
		return false, nil
	case err != nil:
		logBurst(e.cfg.Logger, slog.LevelWarn, "reqlock: a handler's transaction did not commit; answering 503", e.cfg.Locker, err,
			logScope, e.loggedScope(scope), logOutcome, OutcomeNotCommitted)
		return false, reject(ErrNotCommitted, err, retryAfter(e.cfg.RetryAfter, 0))
	case failed:
		return false, nil // the run's own failure, the adapter's answer: rolled back
	case c.sendable(rp):
		c.send() // the handler's own failure: its writes rolled back
		return false, nil
	}
	return false, reject(ErrNotCommitted, errNotRecordable, 0)
}

// lostBeforeRun answers a request whose lock lapsed before its handler
// started: the store answered, so this is no outage to fail open on (the
// key may be another request's by now, running the same handler), but a
// key in use: 409, and the retry gets that request's record.
func (e *Engine) lostBeforeRun(err error) *Rejection {
	return reject(ErrLocked, err, retryAfter(e.cfg.RetryAfter, 0))
}
