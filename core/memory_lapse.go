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

// fire marks the lock lost if it is bound, and otherwise has bind do it.
// Either sees the other's write, so the lock is marked at least once, and
// marking is idempotent.
func (t *lapseTarget) fire() {
	t.fired.Store(true)
	if lk := t.lk.Load(); lk != nil {
		t.dog.lapsed(lk)
	}
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

// fireAll fires each target; the store calls it once it has let go of its
// mutex, and before it answers.
func fireAll(ts []*lapseTarget) {
	for _, t := range ts {
		t.fire()
	}
}
