package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/lockertest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// Since b89475d each renewal round trip gets only a third of the validity
// left. On a healthy link whose round trip is a fair fraction of the lease
// (here 40ms against a 150ms lease: ~97ms of validity left at the first
// renewal, 2.4 round trips), every try now times out at a third of that,
// each retry gets a third of even less, and the lock is declared lost
// although any single try given the validity left would have succeeded.
// Worse, each timed-out extend still lands and lengthens the lease in
// Redis, for a holder that has given up: the key stays taken for nobody.
func TestSlowButHealthyLinkKeepsLock(t *testing.T) {
	px := redistest.StartProxied(t)
	const (
		ttl    = 150 * time.Millisecond
		oneWay = 20 * time.Millisecond
	)
	l := newLocker(redisstore.New(px.Via), core.WithTTL(ttl))
	ctx := ctxT(t, 10*time.Second)
	// Load the scripts first: no NOSCRIPT round trip on the slow link.
	warm, err := l.TryObtain(ctx, "warm-up")
	if err != nil {
		t.Fatal(err)
	}
	if err := warm.Refresh(ctx, ttl); err != nil {
		t.Fatal(err)
	}
	_ = warm.Release(ctx)

	px.Proxy.Delay(faultproxy.Upstream, oneWay)
	px.Proxy.Delay(faultproxy.Downstream, oneWay)
	begin := time.Now()
	if err := px.Via.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	rtt := time.Since(begin)

	lk, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release(ctx)
	skey, _ := l.StoreKey("k")
	select {
	case <-lk.Lost():
		left := px.Direct.PTTL(ctx, skey).Val()
		t.Fatalf("lock with a %v lease lost on a healthy link with a %v round trip; "+
			"Redis still has it for our token: %v, for another %v",
			ttl, rtt.Round(time.Millisecond), px.Direct.Get(ctx, skey).Val() == lk.Token(), left)
	case <-time.After(10 * ttl):
	}
}

// On a healthy link with a 100ms round trip a lock with a 3s lease is kept
// (TestSlowButHealthyLinkKeepsLock asks as much of a 40ms one against a
// 150ms lease). A waiter that runs under a hand-off instead holds it for
// what is left of HandOffTimeout since its last poll was sent: here about
// 250 - 100 (the poll's round trip) - 50 (the wake-up's way) = ~95ms. A
// renewal a third of the way there would come back after that ran out, and
// the lock would be declared lost while Redis renews it: on a link this
// slow the waiter must claim the hand-off with an acquire instead.
func TestHandOverSlowButHealthyLinkKeepsLock(t *testing.T) {
	px := redistest.StartProxied(t)
	ctx := ctxT(t, 20*time.Second)
	const (
		ttl    = 3 * time.Second
		oneWay = 50 * time.Millisecond
	)
	s := newPollScene(px, ttl)

	px.Proxy.Delay(faultproxy.Upstream, oneWay)
	px.Proxy.Delay(faultproxy.Downstream, oneWay)
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
			2*oneWay, px.Direct.Get(ctx, s.skey).Val() == lk.Token(), px.Direct.PTTL(ctx, s.skey).Val())
	case <-time.After(ttl):
	}
}

// pollScene is a holder on px's direct client and a waiter over its proxy,
// both with lease ttl, the waiter's answered polls counted.
type pollScene struct {
	px             redistest.Proxied
	holder, waiter *core.Locker
	polls          *redistest.AnsweredPolls
	skey           string // "k"'s store key
}

func newPollScene(px redistest.Proxied, ttl time.Duration) pollScene {
	s := pollScene{px: px, polls: redistest.NewAnsweredPolls()}
	px.Via.AddHook(s.polls.Hook())
	s.holder = newLocker(redisstore.New(px.Direct), core.WithTTL(ttl))
	s.waiter = newLocker(redisstore.New(px.Via), core.WithTTL(ttl))
	s.skey, _ = s.holder.StoreKey("k")
	return s
}

// handOverAfterPoll puts the waiter in line behind first, the holder's lock
// on "k", and releases first right after one of the waiter's polls was
// answered: the hand-off the waiter then runs under has as much time left
// as it can have. It returns the waiter's lock.
func (s pollScene) handOverAfterPoll(t *testing.T, ctx context.Context, first *core.Lock) *core.Lock {
	t.Helper()
	got := lockertest.ObtainAsync(ctx, s.waiter, "k")
	lockertest.WaitFor(t, "the waiter to stand in line", func() bool { return s.px.Direct.LLen(ctx, s.skey+":q").Val() == 1 })
	s.polls.Drain()
	if !s.polls.Next(5 * time.Second) {
		t.Fatal("the waiter did not poll")
	}
	lk := lockertest.HandOver(t, ctx, first, got)
	t.Logf("obtained under token %q", lk.Token())
	return lk
}
