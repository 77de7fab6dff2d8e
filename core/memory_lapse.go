package core

import (
	"context"
	"sync/atomic"
)

// lapseTarget is how the memory store tells a holder whose lease ran out
// that another caller took the key, or that a sweep dropped it: the store
// fires it before that caller gets the lock, so in one process Lost comes
// first, however late the holder's own timer runs. The store learns of it
// with the grant itself (the acquire's context carries it), so there is no
// moment in which the key is granted and nobody listens; the Locker binds
// the Lock once it has made it, and unbinds it when it stops watching it,
// so that a store entry left behind keeps no Lock alive.
type lapseTarget struct {
	dog   *watchdog
	lk    atomic.Pointer[Lock]
	fired atomic.Bool
}

type lapseKey struct{}

// mayTellLapses reports whether s may be a MemoryStore, directly, embedded
// or behind a wrapper that passes the context on: every store but the
// network ones, which never look, so that their acquires do not pay for a
// target.
func mayTellLapses(s Store) bool {
	switch s.(type) {
	case *RedisStore, *RedlockStore:
		return false
	}
	return true
}

// withLapse returns ctx carrying t for the memory store's grant.
func withLapse(ctx context.Context, t *lapseTarget) context.Context {
	return context.WithValue(ctx, lapseKey{}, t)
}

// lapseFrom is the target an acquire's context carries, or nil.
func lapseFrom(ctx context.Context) *lapseTarget {
	t, _ := ctx.Value(lapseKey{}).(*lapseTarget)
	return t
}

// lapsedLock is a lock its store marked lost under the store's mutex, for
// the rest of the loss (the watchdog, telemetry, the log) once the store has
// let go of its mutex.
type lapsedLock struct {
	dog *watchdog
	lk  *Lock
}

// fire marks the lock lost if it is bound, and otherwise has bind do it.
// Either sees the other's write, so the lock is marked at least once, and
// marking is idempotent. The store calls it under its mutex, so that the
// mark is made before any other caller can be granted the key: marking
// takes only the Lock's own mutex and cancels its contexts, and touches
// neither the store nor the watchdog. ok says this call marked it: the
// caller then finishes the loss with finishLapses, after the mutex.
func (t *lapseTarget) fire() (l lapsedLock, ok bool) {
	t.fired.Store(true)
	if lk := t.lk.Load(); lk != nil && lk.markLost() {
		return lapsedLock{dog: t.dog, lk: lk}, true
	}
	return lapsedLock{}, false
}

// fireInto fires t and adds the lock it marked, if any, to lapsed.
func (t *lapseTarget) fireInto(lapsed []lapsedLock) []lapsedLock {
	if l, ok := t.fire(); ok {
		lapsed = append(lapsed, l)
	}
	return lapsed
}

// bind ties t to lk, the lock made from its grant. lk is watched already,
// so it may be lost (or released) meanwhile, its unbind come first: then t
// lets it go again, since nothing unbinds it later.
func (t *lapseTarget) bind(lk *Lock) {
	t.lk.Store(lk)
	if t.fired.Load() {
		t.dog.lapsed(lk)
	}
	if lk.done() {
		t.unbind()
	}
}

// unbind lets lk go: it is released or lost already.
func (t *lapseTarget) unbind() { t.lk.Store(nil) }

// finishLapses finishes the losses fire marked; the store calls it once it
// has let go of its mutex, and before it answers.
func finishLapses(lapsed []lapsedLock) {
	for _, l := range lapsed {
		l.dog.afterLapse(l.lk)
	}
}
