package core_test

import (
	"testing"
	"time"

	"github.com/reqlock/reqlock/internal/faultproxy"
)

// On a healthy link with a 100ms round trip a lock with a 3s lease is kept
// (TestSlowButHealthyLinkKeepsLock asks as much of a 40ms one against a
// 150ms lease). A waiter that runs under a hand-off instead holds it for
// what is left of HandOffTimeout since its last poll was sent: here about
// 250 - 100 (the poll's round trip) - 50 (the wake-up's way) = ~95ms. A
// renewal a third of the way there would come back after that ran out, and
// the lock would be declared lost while Redis renews it: on a link this
// slow the waiter must claim the hand-off with an acquire instead.
func TestHandOverSlowButHealthyLinkKeepsLock(t *testing.T) {
	px := startProxied(t)
	ctx := ctxT(t, 20*time.Second)
	const (
		ttl    = 3 * time.Second
		oneWay = 50 * time.Millisecond
	)
	s := newPollScene(px, ttl)

	px.proxy.Delay(faultproxy.Upstream, oneWay)
	px.proxy.Delay(faultproxy.Downstream, oneWay)
	// The waiter's Locker has held a lock on this link before: scripts
	// loaded, its round trip known.
	warm, err := s.waiter.TryObtain(ctx, "warm-up")
	if err != nil {
		t.Fatal(err)
	}
	if err := warm.Refresh(ctx, ttl); err != nil {
		t.Fatal(err)
	}
	_ = warm.Release(ctx)

	first, err := s.holder.Obtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	lk := s.handOverAfterPoll(t, ctx, first)

	select {
	case <-lk.Lost():
		time.Sleep(2 * oneWay) // the renewal has landed by now
		t.Fatalf("the lock a waiter took over was declared lost on a healthy link with a %v round trip; "+
			"Redis still has it for its token: %v, for another %v",
			2*oneWay, px.direct.Get(ctx, s.skey).Val() == lk.Token(), px.direct.PTTL(ctx, s.skey).Val())
	case <-time.After(ttl):
	}
}
