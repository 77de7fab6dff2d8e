package httplock

import (
	"context"

	"github.com/reqlock/reqlock/core"
)

// Config.Limit: with Limit > 1 a request holds a permit of its key's
// semaphore instead of the key's lock. A permit is a *core.Lock, so the
// rest of the flow (lock on the context, lost permit, release) is the
// lock's; only the store calls and the answer to a full key differ.

// tryObtain makes one attempt at the key's lock, or at one of its permits.
func (e *Engine) tryObtain(ctx context.Context, key string) (*core.Lock, error) {
	if e.sem != nil {
		return e.sem.TryObtain(ctx, key)
	}
	return e.cfg.Locker.TryObtain(ctx, key)
}

// obtainAfter waits for the key's lock, or for one of its permits in the
// semaphore's line, after the first attempt found it taken.
func (e *Engine) obtainAfter(ctx context.Context, key string, taken error) (*core.Lock, error) {
	if e.sem != nil {
		return e.sem.ObtainAfter(ctx, key, taken)
	}
	return e.cfg.Locker.ObtainAfter(ctx, key, taken)
}

// busy answers a key that admits no one more: 409 for a key someone else
// holds, 429 for a key with Limit requests in flight, so that a client (and
// the metrics) tell a duplicate from a full key. Retry-After is cut to the
// shortest lease left among the holders.
func (e *Engine) busy(err error) *Rejection {
	holder, _ := core.HolderTTL(err)
	reason := ErrLocked
	if e.sem != nil {
		reason = ErrLimitReached
	}
	return reject(reason, err, retryAfter(e.cfg.RetryAfter, holder))
}
