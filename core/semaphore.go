package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/reqlock/reqlock/core/store"
)

// ErrSemaphoreUnsupported is returned by every call of a Semaphore whose
// Locker's store keeps no permits (it does not implement
// store.Semaphores): redlock.Store, for one, refuses them.
var ErrSemaphoreUnsupported = store.ErrSemaphoreUnsupported

// ErrInvalidLimit is what Locker.Semaphore panics with (wrapped) for a
// limit below 1 or above store.MaxLimit.
var ErrInvalidLimit = errors.New("reqlock: invalid semaphore limit")

// Semaphore hands out permits of a key: at most its limit of holders at
// once, across every instance sharing the store. A permit is a *Lock, with
// everything a lock has: its own token and lease, renewal by the watchdog,
// Lost, a Fence strictly greater than that of every earlier permit of the
// key, Release, WithContext and FromContext. It is safe for concurrent use;
// make one per limit and share it, as a Locker.
//
// The limit is the caller's: a permit is granted only while fewer than
// this Semaphore's limit of permits of the key are held, whoever holds them
// and whatever limit they came with. Callers with different limits on one
// key (a plan tier, say) each find at most their own limit of holders at
// the moment they are admitted, and the key never has more holders than the
// largest limit in use. A Semaphore of limit 1 is a lock, but its permits
// are kept apart from the Locker's locks: a lock and a semaphore of one
// key never meet.
type Semaphore struct {
	limit int
	// permits is a Locker whose store is the parent's permits (see
	// permitStore): Obtain, waiting, the watchdog and telemetry are the
	// Locker's own, run on permits. nil when the store keeps none.
	permits *Locker
	store   store.Semaphores
}

// Semaphore returns a Semaphore of limit over l's store, with l's options
// (lease, retry, prefix, holder label, telemetry). It panics with an error
// wrapping ErrInvalidLimit unless 1 ≤ limit ≤ store.MaxLimit. Over a store
// that keeps no permits every call of the Semaphore returns
// ErrSemaphoreUnsupported.
func (l *Locker) Semaphore(limit int) *Semaphore {
	if limit < 1 || limit > store.MaxLimit {
		panic(fmt.Errorf("%w: Semaphore(%d): the limit must be 1 to %d", ErrInvalidLimit, limit, store.MaxLimit))
	}
	s := &Semaphore{limit: limit}
	if ps, ok := l.store.(store.Semaphores); ok {
		var over Store = permitStore{s: ps, limit: limit}
		if lines, ok := ps.(store.PermitLines); ok {
			over = permitLineStore{permitStore: over.(permitStore), lines: lines}
		}
		s.permits, s.store = l.derive(over), ps
	}
	return s
}

// KeepsPermits reports whether l's store keeps permits (implements
// store.Semaphores), so that a caller can refuse a configuration that needs
// a Semaphore at start-up instead of answering ErrSemaphoreUnsupported on
// every call.
func (l *Locker) KeepsPermits() bool {
	_, ok := l.store.(store.Semaphores)
	return ok
}

// Limit is how many holders the Semaphore admits per key.
func (s *Semaphore) Limit() int { return s.limit }

// TryObtain makes one attempt at a permit of key. A full key answers a
// *NotObtainedError (errors.Is ErrNotObtained) whose HolderTTL is the
// shortest lease left among the holders: the earliest a permit may free
// up if nobody releases one.
func (s *Semaphore) TryObtain(ctx context.Context, key string) (*Lock, error) {
	if s.permits == nil {
		return nil, ErrSemaphoreUnsupported
	}
	return s.permits.TryObtain(ctx, key)
}

// Obtain waits for a permit of key as Locker.Obtain waits for a lock: by
// the retry policy, never sleeping past the shortest lease left, woken at
// once by a release of a permit of the key in this Semaphore; only one
// waiter per key in the Semaphore asks the store, the others queue behind
// it in arrival order.
func (s *Semaphore) Obtain(ctx context.Context, key string) (*Lock, error) {
	if s.permits == nil {
		return nil, ErrSemaphoreUnsupported
	}
	return s.permits.Obtain(ctx, key)
}

// ObtainAfter is Obtain for a caller whose own TryObtain just found the key
// full (taken is its error), as Locker.ObtainAfter.
func (s *Semaphore) ObtainAfter(ctx context.Context, key string, taken error) (*Lock, error) {
	if s.permits == nil {
		return nil, ErrSemaphoreUnsupported
	}
	return s.permits.ObtainAfter(ctx, key, taken)
}

// Do runs fn while holding a permit of key, as Locker.Do does with a lock:
// fn's context carries the permit (FromContext) and ends with cause
// ErrLockLost if the permit is lost; the permit is released when fn
// returns or panics.
func (s *Semaphore) Do(ctx context.Context, key string, fn func(context.Context) error) error {
	if s.permits == nil {
		return ErrSemaphoreUnsupported
	}
	return s.permits.Do(ctx, key, fn)
}

// Inspect lists the holders of key's permits: one Holding each, with its
// remaining lease, fence and holder label (WithHolder), StoreKey filled in.
// It only reads. As Locker.Inspect, it is for operators and dashboards: by
// the time it is read a holder may have released or lost its permit.
func (s *Semaphore) Inspect(ctx context.Context, key string) ([]Holding, error) {
	if s.permits == nil {
		return nil, ErrSemaphoreUnsupported
	}
	l := s.permits
	skey, err := storeKey(l.prefix, key)
	if err != nil {
		return nil, err
	}
	hs, err := s.store.InspectPermits(ctx, skey)
	if err != nil {
		return nil, unavailable("inspect", ctxErr(ctx), err)
	}
	for i := range hs {
		hs[i].StoreKey = skey
	}
	return hs, nil
}

// derive returns a Locker with l's options over s: what a Semaphore runs
// its permits on. Every option NewLocker's options set is copied here.
func (l *Locker) derive(s Store) *Locker {
	d := &Locker{
		store:     s,
		ttl:       l.ttl,
		retry:     l.retry,
		retrySet:  l.retrySet,
		autoRenew: l.autoRenew,
		prefix:    l.prefix,
		log:       l.log,
		perTry:    l.perTry,
		telemetry: l.telemetry,
		holder:    l.holder,
	}
	d.dog.init(d)
	d.instance = newWaiterID()
	_, d.handsOver = s.(store.Granter)
	d.lapses = mayTellLapses(s)
	return d
}
