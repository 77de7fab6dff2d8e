package core

import (
	"context"
	"sync/atomic"

	"github.com/reqlock/reqlock/core/store"
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

// mayTellLapses reports whether s may tell lapses (LapseTeller): every
// store that does not say otherwise, since it may wrap a memorystore.Store and
// pass the context on; the network stores say no, so that their acquires
// do not pay for a target.
func mayTellLapses(s Store) bool {
	if t, ok := s.(store.LapseTeller); ok {
		return t.TellsLapses()
	}
	return true
}

// withLapse returns ctx carrying t for the store's grant.
func withLapse(ctx context.Context, t *lapseTarget) context.Context {
	return store.WithLapseNotice(ctx, t)
}

// Lapse implements LapseNotice: it marks the lock lost if it is bound, and
// otherwise has bind do it. Either sees the other's write, so the lock is
// marked at least once, and marking is idempotent. The store calls it under
// its mutex, so that the mark is made before any other caller can be
// granted the key: marking takes only the Lock's own mutex and cancels its
// contexts, and touches neither the store nor the watchdog. The func it
// returns, when this call marked the lock, finishes the loss.
func (t *lapseTarget) Lapse() (finish func()) {
	t.fired.Store(true)
	if lk := t.lk.Load(); lk != nil && lk.markLost() {
		dog := t.dog
		return func() { dog.afterLapse(lk) }
	}
	return nil
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
