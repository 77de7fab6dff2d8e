package store

import (
	"context"
	"time"
)

// Waker is implemented by stores that serve waiters in turn across
// instances: a waiter joins the key's line when it finds the lock taken; a
// release hands the lock to the line's head and tells that waiter's Locker,
// through its Subscription. redisstore.Store and memorystore.Store do; redlock.Store
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
	// key and the waiter, or with WakeAll for every waiter (after a lost
	// connection, say).
	Subscribe(prefix, instance string, wake func(key, waiter string)) Subscription
}

// Granter is implemented by Wakers whose release hands the lock itself to
// the head of the line, with the next fence, and says so in the wake-up: a
// waiter told so may run without a round trip, when it can tell the
// hand-off is current (see NotObtainedError.LastFence). Waker's Subscribe
// drops the fence, so a store built on others (redlock.Store, whose nodes'
// hand-offs are no quorum) never passes one on.
//
// A lock handed to waiter is held under HandedOverToken(waiter) for
// HandOffTimeout, and every acquire of one wait carries that token, so
// that the waiter's release, cancel or Leave frees what was handed to it.
type Granter interface {
	// SubscribeGrants is Subscribe whose wake-ups also carry the fence of
	// the lock a release handed to waiter (0: none).
	SubscribeGrants(prefix, instance string, grant func(key, waiter string, fence uint64)) Subscription
}

// Subscription is one Locker's line to its store's releases.
type Subscription interface {
	// Hold returns once releases reach the subscription, so that a release
	// after it is not missed, and a func to call when done with it. A
	// subscription nobody holds closes a moment later. On an error nothing
	// is held.
	Hold(ctx context.Context) (done func(), err error)
}

// Listener is implemented by subscriptions that can say they hear releases
// already (a waiter held them a moment ago), so that a new waiter stands in
// line from its first attempt on.
type Listener interface {
	Listening() bool
}

// WakeAll is the waiter, and the key, that stand for every waiter.
const WakeAll = "*"

// HandOffTimeout is how long a lock that a release handed to the next
// waiter in line is its own before the waiter renews it: the waiter is
// woken at once and runs under it without a round trip when it can tell the
// hand-off is current (or else claims it in one); one that died or gave up
// holds the key up no longer than this.
const HandOffTimeout = 250 * time.Millisecond

// HandedOverToken is the token under which a lock handed to waiter is
// held, and which every acquire of that wait carries (see Granter).
func HandedOverToken(waiter string) string { return "~" + waiter }
