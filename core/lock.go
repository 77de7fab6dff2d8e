package core

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/reqlock/reqlock/core/store"
)

// Lock is a held lock. Its methods are safe for concurrent use.
//
// A nil *Lock, as a refused TryObtain or Obtain returns, holds nothing, and
// its methods say so rather than panic: Release, ReleaseDetached,
// ReleaseRecording, Refresh and TTL return ErrNotHeld; Lost is closed; WithContext's context is
// cancelled at once with cause ErrNotHeld; Key, StoreKey and Token are ""
// and Fence is 0.
type Lock struct {
	locker *Locker
	key    string // the caller's key
	skey   string // the store key: prefix + {hash}
	token  string
	fence  uint64
	tel    *heldTelemetry // nil unless the Locker has telemetry
	lapse  *lapseTarget   // the memory store's word that the lease ran out; nil on other stores

	// turn (cap 1) is held across one extend and the bookkeeping of its
	// result, so that Refresh and a watchdog renewal take turns; a channel,
	// so that a Refresh waiting behind a hung renewal honours its context.
	turn chan struct{}

	// Guarded by the Locker's watchdog mutex: the renewal schedule. The
	// flags come last, beside mu's, so that the struct packs tight.
	ttl        time.Duration
	validUntil time.Time // by our monotonic clock: we may rely on the lock until then
	nextCheck  time.Time // when the watchdog looks at this lock again
	reach      time.Time // the furthest the lease in the store may run: an extend whose reply was lost may have applied
	retrying   bool      // the last renewal failed for a transient reason
	renewing   bool      // a watchdog renewal is on its way

	mu       sync.Mutex
	mark     acquiredMark // the run's mark its acquire made (ContextWithRunMark)
	released bool
	lost     bool
	lostCh   chan struct{} // made on first Lost call
	onLost   map[*int]func()
}

// closedCh stands in for lostCh when the lock was lost before anyone asked.
var closedCh = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Key is the key the lock was obtained for, as the caller gave it.
func (lk *Lock) Key() string {
	if lk == nil {
		return ""
	}
	return lk.key
}

// StoreKey is the key the store keeps the lock under (Lease.Key): the
// Locker's prefix and the hashed key. A store's own check of a lock, such
// as a guard inside a database transaction, looks it up by this key.
func (lk *Lock) StoreKey() string {
	if lk == nil {
		return ""
	}
	return lk.skey
}

// Token is the random value that proves ownership in the store; with
// WithHolder it ends in "." and the holder label. A lock that a release
// handed to a waiting Locker (see HandOffTimeout) is held under "~" and the
// waiter's random id.
func (lk *Lock) Token() string {
	if lk == nil {
		return ""
	}
	return lk.token
}

// Fence is a number strictly greater than that of every earlier holder of
// the key. Pass it to the resource the lock protects and have the resource
// refuse a write with a fence below the highest it has seen: that keeps out
// a holder that paused past its lease.
func (lk *Lock) Fence() uint64 {
	if lk == nil {
		return 0
	}
	return lk.fence
}

// TTL asks the store how long the lease has left. ErrNotHeld means the lock
// is no longer ours; that includes a lock already known lost, whose copies
// a redlock.Store may still keep for the few milliseconds of its safety
// margin.
func (lk *Lock) TTL(ctx context.Context) (time.Duration, error) {
	if lk == nil || lk.isLost() {
		return 0, ErrNotHeld
	}
	d, err := lk.locker.store.TTL(ctx, lk.skey, lk.token)
	if err != nil && !errors.Is(err, ErrNotHeld) {
		return 0, unavailable("ttl", ctxErr(ctx), err)
	}
	return d, err
}

// Refresh extends the lease to ttl from now; later renewals by the watchdog
// keep that ttl. The lease in the store never shrinks: a ttl shorter than
// what is left of it changes the renewals to come, not the lease.
// ErrNotHeld means the lock was already gone, or was declared lost while
// the call was under way: a lost lock stays lost, and whatever this call
// extended in the store is released again. After any other error the
// store may or may not have applied it; the lock is trusted as before and
// the watchdog tries again.
func (lk *Lock) Refresh(ctx context.Context, ttl time.Duration) error {
	if lk == nil {
		return ErrNotHeld
	}
	if ttl < MinTTL {
		return fmt.Errorf("reqlock: Refresh: TTL %v is below the minimum %v", ttl, MinTTL)
	}
	ttl = ttl.Truncate(time.Millisecond)
	select {
	case lk.turn <- struct{}{}:
	case <-ctx.Done():
		return unavailable("refresh", ctx.Err(), errors.New("a renewal of the lock is under way"))
	}
	defer lk.endTurn()
	if lk.done() {
		return ErrNotHeld
	}
	l := lk.locker
	start := l.dog.extending(lk, ttl)
	r := l.store.Extend(ctx, []store.Lease{{Key: lk.skey, Token: lk.token, TTL: ttl}})[0]
	if l.telemetry != nil {
		l.telemetry.renewal(r.Err)
	}
	switch {
	case r.Err == nil:
		if !l.dog.renewed(lk, ttl, start, r.Validity) {
			l.extendedTooLate(lk)
			return ErrNotHeld
		}
		return nil
	case errors.Is(r.Err, ErrNotHeld):
		l.dog.lose(lk, lostRefreshNotHeld)
		return ErrNotHeld
	default:
		l.dog.retrySoon(lk, r.Err)
		return unavailable("refresh", ctxErr(ctx), r.Err)
	}
}

// Release gives the lock up and stops its renewal at once. ErrNotHeld means
// it was not ours any more (released before, or expired); nothing of anyone
// else's is freed. When the store fails to answer (ErrUnavailable), the
// release may or may not have happened; it is then retried in the
// background until it is known done or the lease has run out, so that a
// store that stalls for a moment does not keep the key from others for the
// rest of the lease.
func (lk *Lock) Release(ctx context.Context) error {
	if lk == nil {
		return ErrNotHeld
	}
	if t := lk.locker.telemetry; t != nil {
		ctx, span := t.startRelease(ctx)
		err := lk.release(ctx)
		endRelease(span, lk, err)
		return err
	}
	return lk.release(ctx)
}

func (lk *Lock) release(ctx context.Context) error {
	lk.mu.Lock()
	if lk.released {
		lk.mu.Unlock()
		return ErrNotHeld
	}
	lk.released = true
	endHold := lk.tel != nil && !lk.lost
	unmark := lk.unstartedMark()
	lk.mu.Unlock()
	if endHold {
		lk.locker.telemetry.holdEnded(lk, holdReleased)
	}

	l := lk.locker
	until := l.dog.remove(lk)
	if unmark {
		lk.dropMark(ctx)
	}
	err := l.store.Release(ctx, lk.skey, lk.token)
	l.wakeLocal(lk.skey)
	if err != nil && !errors.Is(err, ErrNotHeld) {
		l.retryRelease(ctx, lk.skey, lk.token, until)
		return unavailable("release", ctxErr(ctx), err)
	}
	return err
}

// ReleaseDetached releases with a context that keeps ctx's values but not its
// cancellation, bounded by a short timeout of its own: the way to release
// after a request whose client may be gone.
func (lk *Lock) ReleaseDetached(ctx context.Context) error {
	if lk == nil {
		return ErrNotHeld
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lk.locker.releaseTimeout())
	defer cancel()
	return lk.Release(rctx)
}

// Lost returns a channel that is closed when the lock is known to be gone
// while we still meant to hold it: the watchdog could not renew it before the
// lease ran out, or found it deleted or taken. Release does not close it.
func (lk *Lock) Lost() <-chan struct{} {
	if lk == nil {
		return closedCh
	}
	lk.mu.Lock()
	defer lk.mu.Unlock()
	if lk.lostCh == nil {
		if lk.lost {
			return closedCh
		}
		lk.lostCh = make(chan struct{})
	}
	return lk.lostCh
}

// WithContext returns a context derived from ctx that carries the lock (see
// FromContext) and is cancelled with cause ErrLockLost when the lock is lost.
// Call cancel when done with it.
func (lk *Lock) WithContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if lk == nil {
		cctx, cancelCause := context.WithCancelCause(ctx)
		cancelCause(ErrNotHeld)
		return cctx, func() {}
	}
	cctx, cancelCause := context.WithCancelCause(context.WithValue(ctx, lockCtxKey{}, lk))
	id := new(int)
	lk.mu.Lock()
	if lk.lost {
		lk.mu.Unlock()
		cancelCause(ErrLockLost)
		return cctx, func() {}
	}
	if lk.onLost == nil {
		lk.onLost = make(map[*int]func(), 1)
	}
	lk.onLost[id] = func() { cancelCause(ErrLockLost) }
	lk.mu.Unlock()
	return cctx, func() {
		lk.mu.Lock()
		delete(lk.onLost, id)
		lk.mu.Unlock()
		cancelCause(nil)
	}
}

// markLost records the loss once and reports whether this call did it.
func (lk *Lock) markLost() bool {
	lk.mu.Lock()
	if lk.lost || lk.released {
		lk.mu.Unlock()
		return false
	}
	lk.lost = true
	lostCh := lk.lostCh
	callbacks := lk.onLost
	lk.onLost = nil
	lk.mu.Unlock()
	// The contexts end before Lost closes: whoever sees Lost finds them
	// ended with ErrLockLost.
	for _, f := range callbacks {
		f()
	}
	if lostCh != nil {
		close(lostCh)
	}
	return true
}

// tryTurn takes the turn to extend lk if nobody has it.
func (lk *Lock) tryTurn() bool {
	select {
	case lk.turn <- struct{}{}:
		return true
	default:
		return false
	}
}

func (lk *Lock) endTurn() { <-lk.turn }

// done reports whether the lock was released or lost.
func (lk *Lock) done() bool {
	lk.mu.Lock()
	defer lk.mu.Unlock()
	return lk.released || lk.lost
}

func (lk *Lock) isLost() bool {
	lk.mu.Lock()
	defer lk.mu.Unlock()
	return lk.lost
}

type lockCtxKey struct{}

// FromContext returns the lock that Do, Lock.WithContext or a reqlock
// middleware holds for ctx.
func FromContext(ctx context.Context) (*Lock, bool) {
	lk, ok := ctx.Value(lockCtxKey{}).(*Lock)
	return lk, ok
}
