package storetest

import (
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

// contractPromises are the parts of the contract a store opts into by
// interface beyond the lock itself.
var contractPromises = []promise{
	{"hand-off-with-fence", contractGranter},
	{"hand-off-lasts", contractHandOffLasts},
	{"lapse-notice", contractLapseNotice},
	{"kind", contractKind},
	{"closed", contractClosed},
}

// A store that hands locks over (Granter) tells the head of the line with
// the fence of the lock it handed over, greater than the last fence the
// waiter was told of when turned away; the lock is held under
// HandedOverToken(waiter) for the hand-off bound, and released under it.
func contractGranter(t *testing.T, h Harness) {
	f := open(t, h)
	g := as[store.Granter](f, "store.Granter", "a waiter told of a release claims the lock with a round trip")
	w := as[store.Waker](f, "store.Waker", linesMeaning)
	key := f.key()
	instance := random()
	type grant struct {
		key, waiter string
		fence       uint64
	}
	grants := make(chan grant, 64)
	sub := g.SubscribeGrants(h.prefix(), instance, func(key, waiter string, fence uint64) {
		select {
		case grants <- grant{key, waiter, fence}:
		default:
		}
	})
	done, err := sub.Hold(f.ctx)
	if err != nil {
		t.Fatalf("Subscription.Hold: %v", err)
	}
	defer done()
	holder := f.lease(key, h.long())
	first := f.acquire(holder)
	waiter := waiterIn(instance)
	token := store.HandedOverToken(waiter)
	_, _, err = w.AcquireQueued(f.ctx, store.Lease{Key: key, Token: token, TTL: h.long()}, waiter, false)
	var no *store.NotObtainedError
	if !errors.As(err, &no) {
		t.Fatalf("AcquireQueued of a held key: %v, want a *NotObtainedError", err)
	}
	if no.LastFence < first.Fence {
		t.Fatalf("NotObtainedError.LastFence %d, want at least the holder's fence %d", no.LastFence, first.Fence)
	}
	f.release(holder)
	timeout := time.After(h.patience())
	for {
		select {
		case got := <-grants:
			if got.key != key || got.waiter != waiter {
				continue
			}
			if got.fence <= no.LastFence {
				t.Fatalf("the hand-off's fence %d is not above %d, the last the waiter was told of", got.fence, no.LastFence)
			}
			left, err := f.s.TTL(f.ctx, key, token)
			if err != nil || left <= 0 || left > h.handOffBound() {
				t.Fatalf("TTL under HandedOverToken after the hand-off: %v, %v; want within (0, %v]", left, err, h.handOffBound())
			}
			if err := f.s.Release(f.ctx, key, token); err != nil {
				t.Fatalf("Release under HandedOverToken of the lock handed over: %v", err)
			}
			f.mustBeFree(key, "after the waiter released what was handed to it")
			return
		case <-timeout:
			t.Fatalf("no hand-off to %s of %s within %v of the release", waiter, key, h.patience())
		}
	}
}

// A store names its kind (Kinder) for telemetry: short, lower case, the
// same every time.
func contractKind(t *testing.T, h Harness) {
	f := open(t, h)
	k := as[store.Kinder](f, "store.Kinder", `its telemetry says reqlock.store="other"`)
	kind := k.Kind()
	if !regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`).MatchString(kind) || kind == "other" {
		t.Fatalf("Kind() = %q, want a short lower-case name of its own", kind)
	}
	if again := k.Kind(); again != kind {
		t.Fatalf("Kind() = %q, then %q", kind, again)
	}
}

// A store whose client was closed says so: the calls a Locker retries in
// the background to undo an acquire (Release, Cancel; Leave, when it
// fails) fail with an error that wraps core.ErrStoreClosed, so that it
// stops retrying them.
func contractClosed(t *testing.T, h Harness) {
	f := open(t, h)
	if h.Close == nil {
		t.Skip("the harness has no Close hook (a store without a client to close has nothing to say)")
	}
	l := f.lease(f.key(), h.long())
	f.acquire(l)
	h.Close(t, f.s)
	if err := f.s.Release(f.ctx, l.Key, l.Token); !errors.Is(err, core.ErrStoreClosed) {
		t.Errorf("Release on a closed client: %v, want an error wrapping ErrStoreClosed", err)
	}
	if c, ok := f.s.(store.Canceler); ok {
		if err := c.Cancel(f.ctx, l); !errors.Is(err, core.ErrStoreClosed) {
			t.Errorf("Cancel on a closed client: %v, want an error wrapping ErrStoreClosed", err)
		}
	}
	// A Leave may be best effort, and say nothing.
	if w, ok := f.s.(store.Waker); ok {
		if err := w.Leave(f.ctx, l.Key, waiterIn(random())); err != nil && !errors.Is(err, core.ErrStoreClosed) {
			t.Errorf("Leave on a closed client: %v, want nil or an error wrapping ErrStoreClosed", err)
		}
	}
}
