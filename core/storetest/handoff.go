package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

// handOffEvidence is how soon after a release another caller's grant must
// come back to prove a hand-off shorter than store.HandOffTimeout, and how
// long after it a refusal must still be sent to prove one long enough: a
// fifth of the timeout left for the store's clock and grain.
const handOffEvidence = store.HandOffTimeout * 4 / 5

// handOffSamples is how many hand-offs the promise measures before it
// gives up telling: only a machine that stalls through each of them.
const handOffSamples = 5

// A Granter's hand-off lasts what core trusts: a Locker's waiter told of a
// hand-off runs under the lock without a round trip until its last refused
// attempt plus HandOffTimeout (less the drift), so no other caller may take
// a key handed to a waiter, even one that never claims it, sooner than
// HandOffTimeout after the release.
//
// Timings are evidence only when the machine was quick enough to give it,
// so a sample fails the store only when another caller's grant came back
// within handOffEvidence of sending the release (the key was free at the
// store sooner than that after the release landed), clears it when an
// acquire sent handOffEvidence after the release returned was still
// refused, and otherwise (a stall between the two) is taken again.
func contractHandOffLasts(t *testing.T, h Harness) {
	f := open(t, h)
	g := as[store.Granter](f, "store.Granter", "a waiter told of a release claims the lock with a round trip")
	w := as[store.Waker](f, "store.Waker", linesMeaning)
	if h.HandOffBound > 0 && h.HandOffBound < store.HandOffTimeout {
		t.Fatalf("Harness.HandOffBound is %v: a Granter's hand-off must last store.HandOffTimeout (%v), which its Lockers trust", h.HandOffBound, store.HandOffTimeout)
	}
	// The waiter's instance listens for grants, as a waiting Locker does,
	// and never claims what it is told of.
	instance := random()
	done, err := g.SubscribeGrants(h.prefix(), instance, func(string, string, uint64) {}).Hold(f.ctx)
	if err != nil {
		t.Fatalf("Subscription.Hold: %v", err)
	}
	defer done()
	for range handOffSamples {
		if f.handOffLasted(w, instance) {
			return
		}
	}
	t.Skipf("none of %d hand-offs could tell: the machine stalled each time between the release and the acquires after it", handOffSamples)
}

// handOffLasted hands a key to a waiter of instance that never claims it,
// and has another caller try the key until it gets it: true when a refusal
// proved the hand-off long enough, false when the sample proved nothing;
// a grant that proves it short fails the test.
func (f *fixture) handOffLasted(w store.Waker, instance string) bool {
	f.t.Helper()
	key := f.key()
	holder := f.lease(key, f.h.long())
	f.acquire(holder)
	waiter := waiterIn(instance)
	f.queue(w, f.waitLease(key, waiter), waiter)
	defer func() {
		// Whatever was handed over goes, so that the next sample's key is
		// the only one held.
		_ = f.s.Release(f.ctx, key, store.HandedOverToken(waiter))
		_ = w.Leave(f.ctx, key, waiter)
	}()
	sent := time.Now()
	f.release(holder)
	returned := time.Now()
	for {
		l := f.lease(key, f.h.short())
		at := time.Now()
		_, err := f.s.Acquire(f.ctx, l)
		back := time.Now()
		if err == nil {
			_ = f.s.Release(f.ctx, l.Key, l.Token)
			if took := back.Sub(sent); took < handOffEvidence {
				f.t.Fatalf("another caller took a key handed to a waiter that did not claim it, %v after the release was sent: a hand-off lasts store.HandOffTimeout (%v), and a Locker's waiter runs under it that long without asking the store",
					took, store.HandOffTimeout)
			}
			return false
		}
		if !errors.Is(err, core.ErrNotObtained) {
			f.t.Fatalf("Acquire of a key handed to a waiter: %v, want ErrNotObtained", err)
		}
		if at.Sub(returned) >= handOffEvidence {
			return true
		}
		time.Sleep(time.Millisecond)
	}
}
