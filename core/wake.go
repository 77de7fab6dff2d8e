package core

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reqlock/reqlock/core/store"
)

// wakeAll is the waiter that stands for every waiter.
const wakeAll = store.WakeAll

// newWaiterID returns an id, random, so that no other waiter or instance,
// here or elsewhere, has it; base64url, so it holds no '/' or ' '.
func newWaiterID() string { return newToken()[:16] }

// wakeSlot is how one waiter is woken: ch is signalled, and fence keeps the
// largest fence a hand-off to it carried, until the waiter takes it.
type wakeSlot struct {
	ch    chan struct{} // cap 1
	fence atomic.Uint64
}

func newWakeSlot() *wakeSlot { return &wakeSlot{ch: make(chan struct{}, 1)} }

// offer keeps fence if it is the largest yet.
func (s *wakeSlot) offer(fence uint64) {
	for {
		old := s.fence.Load()
		if fence <= old || s.fence.CompareAndSwap(old, fence) {
			return
		}
	}
}

// take returns the largest fence offered since the last take, 0 if none.
func (s *wakeSlot) take() uint64 { return s.fence.Swap(0) }

// wakeRegistry maps the waiters of one Locker to their wake-up slots.
type wakeRegistry struct {
	mu    sync.Mutex
	byKey map[string]map[string]*wakeSlot
}

func (r *wakeRegistry) add(key, waiter string, slot *wakeSlot) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byKey == nil {
		r.byKey = make(map[string]map[string]*wakeSlot)
	}
	if r.byKey[key] == nil {
		r.byKey[key] = make(map[string]*wakeSlot)
	}
	r.byKey[key][waiter] = slot
}

func (r *wakeRegistry) remove(key, waiter string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byKey[key], waiter)
	if len(r.byKey[key]) == 0 {
		delete(r.byKey, key)
	}
}

// wake signals waiter of key, every waiter of key for wakeAll, and every
// waiter of every key when key is wakeAll too; a waiter that is not here
// (it gave up) is ignored.
func (r *wakeRegistry) wake(key, waiter string) { r.grant(key, waiter, 0) }

// grant is wake that also hands waiter the fence of the lock a release
// handed it (0: none).
func (r *wakeRegistry) grant(key, waiter string, fence uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, waiters := range r.byKey {
		if k != key && key != wakeAll {
			continue
		}
		for id, slot := range waiters {
			if waiter == wakeAll || id == waiter {
				if fence > 0 {
					slot.offer(fence)
				}
				select {
				case slot.ch <- struct{}{}:
				default:
				}
			}
		}
	}
}

// opening reports whether sub is a subscription that has yet to open its
// connection (a Listener not listening): holding it may take a round trip
// or a new connection, which a caller's schedule does not wait for.
func opening(sub store.Subscription) bool {
	l, ok := sub.(store.Listener)
	return ok && !l.Listening()
}

// holdAlongside holds sub in the background, for a wait that goes on
// meanwhile, bounded by timeout; stop lets go of it, or stops trying. A
// release while the subscription was not listening yet goes unheard, and
// may have handed the lock to this waiter: once it listens, a waiter that
// has stood in line since (joined) is woken, to claim what was handed to
// it, or to find the key still taken.
func holdAlongside(ctx context.Context, sub store.Subscription, timeout time.Duration, wake *wakeSlot, joined *atomic.Bool) (stop func()) {
	hctx, cancel := context.WithTimeout(ctx, timeout)
	held := make(chan func(), 1)
	go func() {
		done, err := sub.Hold(hctx)
		if err != nil {
			done = func() {}
		} else if joined.Load() {
			select {
			case wake.ch <- struct{}{}:
			default:
			}
		}
		held <- done
	}()
	return func() {
		cancel()
		(<-held)()
	}
}
