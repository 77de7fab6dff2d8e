package httplock

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/reqlock/reqlock/core"
)

// wait is Wait mode after the first attempt found the key taken; wctx is ctx
// bounded by MaxWait since before that attempt, r the request (or nil),
// whose body is read ahead of the wait; withRecord makes it end with the
// key's record as soon as one is written (by the holder it waits for).
//
// One core ObtainAfter does the waiting, without repeating that attempt at
// once: MaxWait (and the client) bound the whole wait, StoreTimeout bounds
// each store round trip inside it, so a store that hangs mid-wait is noticed
// within StoreTimeout rather than at MaxWait. The Locker queues the waiters
// of a key locally, in order; how they are woken depends on its store (see
// the package doc's notes: at once, across instances, with a store.Waker).
func (e *Engine) wait(ctx, wctx context.Context, r *http.Request, scope, key string, taken error, withRecord bool) (*core.Lock, []byte, *Rejection) {
	if !e.waiting.join(key, e.cfg.MaxWaiters) {
		return nil, nil, reject(ErrTooManyWaiters, taken, retryAfter(e.cfg.RetryAfter, 0))
	}
	defer e.waiting.leave(key)
	// After join: MaxWaiters bounds the memory this takes. Beside the wait,
	// so that a slow upload does not eat into MaxWait; the handler does not
	// run before it is done.
	bodyRead := e.readBodyAhead(r)

	wctx = core.ContextWithAttemptTimeout(wctx, e.cfg.StoreTimeout)
	var lk *core.Lock
	var record []byte
	var err error
	if withRecord {
		lk, record, err = e.cfg.Locker.ObtainOrRecordAfter(wctx, key, taken)
	} else {
		lk, err = e.obtainAfter(wctx, key, taken)
	}
	bodyRead()
	switch {
	case err == nil && clientGone(ctx):
		// Got it just as the client left: nobody to run it for.
		if lk != nil {
			e.release(ctx, lk, scope)
		}
		return nil, nil, reject(ErrClientGone, ctx.Err(), 0)
	case err == nil:
		return lk, record, nil
	case clientGone(ctx):
		return nil, nil, reject(ErrClientGone, err, 0)
	case !errors.Is(err, core.ErrNotObtained):
		lk, rej := e.storeFailed(ctx, scope, err)
		return lk, nil, rej
	default:
		return nil, nil, e.busy(err)
	}
}

// waiters counts, per key, the requests waiting on this instance.
type waiters struct {
	mu sync.Mutex
	n  map[string]int
}

// join counts one more waiter for key unless limit (when ≥ 0) are waiting.
func (w *waiters) join(key string, limit int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if limit >= 0 && w.n[key] >= limit {
		return false
	}
	if w.n == nil {
		w.n = make(map[string]int)
	}
	w.n[key]++
	return true
}

func (w *waiters) leave(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n[key]--; w.n[key] <= 0 {
		delete(w.n, key)
	}
}
