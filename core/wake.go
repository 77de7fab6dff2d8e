package core

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Waker is implemented by stores that serve waiters in turn across
// instances: a waiter joins the key's line when it finds the lock taken; a
// release hands the lock to the line's head and tells that waiter's Locker,
// through its Subscription. RedisStore and MemoryStore do; RedlockStore
// tells everyone in line on a release and hands the lock to nobody.
//
// A waiter is "<instance>/<wait>": instance names the Locker, whose one
// subscription hears of every key it waits for.
type Waker interface {
	// AcquireQueued is Acquire (or, withRecord, AcquireOrRecord) for waiter:
	// taken, it joins the key's line, once; a lock handed to it is taken.
	AcquireQueued(ctx context.Context, l Lease, waiter string, withRecord bool) (Grant, []byte, error)
	// Leave takes waiter out of the key's line, and passes on a hand-off it
	// will not claim.
	Leave(ctx context.Context, key, waiter string) error
	// Subscribe opens the subscription of one instance to the releases that
	// concern its waiters, for keys under prefix: wake is called with the
	// key and the waiter, or with wakeAll for every waiter (after a lost
	// connection, say).
	Subscribe(prefix, instance string, wake func(key, waiter string)) Subscription
}

// Subscription is one Locker's line to its store's releases.
type Subscription interface {
	// Hold returns once releases reach the subscription, so that a release
	// after it is not missed, and a func to call when done with it. A
	// subscription nobody holds closes a moment later. On an error nothing
	// is held.
	Hold(ctx context.Context) (done func(), err error)
}

// wakeAll is the waiter that stands for every waiter.
const wakeAll = "*"

// unwatchLinger is how long a subscription stays open after its last
// holder let go: under steady contention waiters come and go all the time,
// and each SUBSCRIBE and UNSUBSCRIBE is a command.
const unwatchLinger = 500 * time.Millisecond

// newWaiterID returns an id, random, so that no other waiter or instance,
// here or elsewhere, has it; base64url, so it holds no '/' or ' '.
func newWaiterID() string { return newToken()[:16] }

// granter is implemented by stores whose release hands the lock itself to
// the head of the line, with the next fence, and says so in the wake-up
// (RedisStore): a waiter told so may run without a round trip (see
// Locker.wait). Waker's Subscribe drops the fence, so a store built on
// others (RedlockStore, whose nodes' hand-offs are no quorum) never passes
// one on.
type granter interface {
	subscribeGrants(prefix, instance string, grant func(key, waiter string, fence uint64)) Subscription
}

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
