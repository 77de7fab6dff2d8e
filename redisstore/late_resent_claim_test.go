package redisstore_test

import (
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
)

// A Locker without the watchdog claims a hand-off with an acquire. Its
// claim's reply times out and go-redis resends it; the resent copy finds
// '~' + waiter and the waiter holds the lock under that name. Over a client
// that resends, a release leaves a cancel marker for the lock's token so
// that a late first copy of its acquire takes nothing (README, "Redis
// client settings"). The first copy of the claim lands after the release,
// on a free key: the marker must void it, or it takes the lock for nobody,
// for a whole lease.
func TestHandOverResentClaimLandingAfterReleaseTakesNothing(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	// Shorter than HandOffTimeout: the resent claim lands within the
	// hand-off and finds '~' + waiter.
	s := standInLine(t, ctx, ctx, 60*time.Millisecond, nil, core.WithoutWatchdog())
	// Right after an answered poll, so that the next command of the waiter
	// is its claim of the hand-off, not its next poll.
	if !s.polls.Next(5 * time.Second) {
		t.Fatal("the waiter did not poll")
	}
	h := s.proxy.HoldNext(faultproxy.Upstream)
	t.Cleanup(h.Release)
	if err := s.first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	heldAcquire(t, h)

	if err := s.waiterGot(t).Release(ctx); err != nil {
		t.Fatal(err)
	}
	s.released(t, ctx)
	h.Release() // the first copy of the claim lands now, on a free key
	s.freeForOthers(t, ctx, "after the waiter released, the first copy of its resent claim")
}
