package core

import (
	"context"
	"sync"
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

// wakeRegistry maps the waiters of one Locker to their wake-up channels.
type wakeRegistry struct {
	mu    sync.Mutex
	byKey map[string]map[string]chan struct{}
}

func (r *wakeRegistry) add(key, waiter string, ch chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byKey == nil {
		r.byKey = make(map[string]map[string]chan struct{})
	}
	if r.byKey[key] == nil {
		r.byKey[key] = make(map[string]chan struct{})
	}
	r.byKey[key][waiter] = ch
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
func (r *wakeRegistry) wake(key, waiter string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, waiters := range r.byKey {
		if k != key && key != wakeAll {
			continue
		}
		for id, ch := range waiters {
			if waiter == wakeAll || id == waiter {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
		}
	}
}
