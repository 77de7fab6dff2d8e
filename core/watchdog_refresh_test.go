package core_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/lockertest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// Refresh takes its turn behind a watchdog renewal (lk.extending) with a
// plain Mutex.Lock, ignoring its own context. A renewal whose command hangs
// (a stalled link, a paused Redis) holds that mutex for the rest of the
// lock's validity — about two thirds of the lease — so Refresh(ctx) with a
// 100ms deadline returns seconds later: with the default 10s lease, ~6.6s.
// Every other call here honours ctx (that is the point of
// ContextTimeoutEnabled and of the NewRedisStore warning).
func TestRefreshHonoursItsContextWhileARenewalHangs(t *testing.T) {
	px := redistest.StartProxied(t)
	const ttl = 3 * time.Second
	l := newLocker(redisstore.New(px.Via), core.WithTTL(ttl))
	ctx := ctxT(t, 20*time.Second)
	lk, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release(ctx)

	// The watchdog's first renewal (at ~ttl/3) is the next command; hold it.
	h := px.Proxy.HoldNext(faultproxy.Upstream)
	t.Cleanup(h.Release)
	redistest.WaitCaptured(t, h, "renewal")

	rctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = lk.Refresh(rctx, ttl)
	took := time.Since(start)
	t.Logf("Refresh(ctx with 100ms deadline) returned %v after %v", err, took.Round(time.Millisecond))
	if took > time.Second {
		t.Fatalf("Refresh ignored its 100ms deadline: it returned after %v (err: %v), "+
			"blocked on the lock's extending mutex behind a hung watchdog renewal", took.Round(time.Millisecond), err)
	}
}

// heldReply lets one watchdog renewal run in Redis but holds back its reply,
// and can cut the client off from Redis altogether.
type heldReply struct {
	core.Store
	ttl      time.Duration
	armed    atomic.Bool
	executed chan struct{}
	proceed  chan struct{}
	cut      atomic.Bool
}

func (s *heldReply) Extend(ctx context.Context, ls []store.Lease) []store.Renewal {
	if s.cut.Load() {
		out := make([]store.Renewal, len(ls))
		for i := range out {
			out[i].Err = errors.New("i/o timeout")
		}
		return out
	}
	out := s.Store.Extend(ctx, ls)
	if ls[0].TTL == s.ttl && s.armed.CompareAndSwap(true, false) {
		close(s.executed)
		<-s.proceed
	}
	return out
}

// A Refresh to a shorter lease while a watchdog renewal is in flight: the
// two take turns, the lease in Redis never shrinks, and whatever the holder
// ends up trusting, it knows the lock is lost by the time someone else can
// take it.
func TestRefreshTakesTurnsWithRenewal(t *testing.T) {
	srv := redistest.Start(t)
	const long, short = 1500 * time.Millisecond, 300 * time.Millisecond
	st := &heldReply{Store: redisstore.New(srv.Client(t)), ttl: long,
		executed: make(chan struct{}), proceed: make(chan struct{})}
	st.armed.Store(true)
	a := newLocker(st, core.WithTTL(long))
	b := newLocker(redisstore.New(srv.Client(t)), core.WithTTL(long))
	ctx := ctxT(t, 10*time.Second)

	lk, err := a.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	<-st.executed // the watchdog's renewal ran; its reply is held back
	refreshed := make(chan error, 1)
	go func() { refreshed <- lk.Refresh(ctx, short) }()
	time.Sleep(20 * time.Millisecond) // the Refresh waits its turn
	close(st.proceed)
	if err := <-refreshed; err != nil {
		t.Fatal(err)
	}
	st.cut.Store(true) // a partition: no more renewals
	// Redis lets the key go 300ms after the Refresh.
	takeOverAfterLoss(t, ctx, b, lk)
}

// takeOverAfterLoss has other take lk's key once Redis lets it go, and
// checks that lk knew by then that it had lost it: a holder must never
// believe it holds a lock someone else has.
func takeOverAfterLoss(t *testing.T, ctx context.Context, other *core.Locker, lk *core.Lock) {
	t.Helper()
	next, err := other.Obtain(ctx, lk.Key())
	if err != nil {
		t.Fatal(err)
	}
	defer next.Release(ctx)
	select {
	case <-lk.Lost():
	case <-time.After(100 * time.Millisecond):
		t.Fatal("another holder has the lock and ours still believes it holds it")
	}
}

// lostReply applies every extend to a given ttl but reports it failed, as
// when the reply is lost or the deadline hits after Redis ran it; cut fails
// every extend without running it, as a partition does.
type lostReply struct {
	core.Store
	ttl time.Duration
	cut atomic.Bool
}

func (s *lostReply) Extend(ctx context.Context, ls []store.Lease) []store.Renewal {
	out := make([]store.Renewal, len(ls))
	if !s.cut.Load() {
		out = s.Store.Extend(ctx, ls)
	}
	for i, l := range ls {
		if s.cut.Load() || l.TTL == s.ttl {
			out[i] = store.Renewal{Err: errors.New("i/o timeout")}
		}
	}
	return out
}

// A Refresh to a shorter lease that fails without knowing whether Redis
// applied it: applied or not, it cannot shorten the lease in Redis, so the
// holder may keep trusting the longer lease it had, and knows the lock is
// lost by the time someone else can take it.
func TestRefreshOfUnknownOutcomeKeepsTrustRight(t *testing.T) {
	srv := redistest.Start(t)
	const long, short = 1500 * time.Millisecond, 300 * time.Millisecond
	st := &lostReply{Store: redisstore.New(srv.Client(t)), ttl: short}
	a := newLocker(st, core.WithTTL(long))
	b := newLocker(redisstore.New(srv.Client(t)), core.WithTTL(long))
	ctx := ctxT(t, 10*time.Second)

	lk, err := a.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := lk.Refresh(ctx, short); !errors.Is(err, core.ErrUnavailable) {
		t.Fatalf("Refresh: %v, want ErrUnavailable", err)
	}
	st.cut.Store(true) // a partition: no more renewals
	// Redis lets the key go 300ms after the Refresh.
	takeOverAfterLoss(t, ctx, b, lk)
}

// A Refresh whose extend runs in Redis, but whose reply comes back only
// after the lock was declared lost (renewal replies are late too): the
// Refresh fails, and what it extended is released. A lost lock stays lost.
func TestRefreshAfterLostExtendsNothing(t *testing.T) {
	px := redistest.StartProxied(t)
	const ttl = 300 * time.Millisecond
	l := newLocker(redisstore.New(px.Via), core.WithTTL(ttl))
	ctx := ctxT(t, 10*time.Second)
	lk, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := lk.Refresh(ctx, ttl); err != nil { // loads the script: no NOSCRIPT round trip later
		t.Fatal(err)
	}
	px.Proxy.Delay(faultproxy.Downstream, 2*ttl) // commands run; replies come late
	if err := lk.Refresh(ctx, 10*time.Second); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("Refresh answered after the lock was lost: %v, want ErrNotHeld", err)
	}
	select {
	case <-lk.Lost():
	default:
		t.Fatal("Refresh failed but Lost did not fire")
	}
	px.Proxy.Heal()
	skey, _ := l.StoreKey("k")
	lockertest.WaitFor(t, "the key Refresh extended to be released", func() bool { return px.Direct.Exists(ctx, skey).Val() == 0 })
	if err := lk.Refresh(ctx, 10*time.Second); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("second Refresh: %v, want ErrNotHeld", err)
	}
	if n := px.Direct.Exists(ctx, skey).Val(); n != 0 {
		t.Fatal("a Refresh after Lost put the key back")
	}
}
