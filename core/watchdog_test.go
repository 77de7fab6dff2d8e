package core_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
)

// pauseOnExtend pauses the server as soon as the watchdog renews a lease of
// a given length: Redis hangs in the middle of that renewal.
type pauseOnExtend struct {
	core.Store
	ttl   time.Duration
	armed atomic.Bool
	srv   *redistest.Server
}

func (s *pauseOnExtend) Extend(ctx context.Context, ls []core.Lease) []core.Renewal {
	for _, l := range ls {
		if l.TTL == s.ttl && s.armed.CompareAndSwap(true, false) {
			s.srv.Pause()
			break
		}
	}
	return s.Store.Extend(ctx, ls)
}

// While a renewal of a long lease hangs, a short lock of the same Locker
// must still be declared lost when its own lease runs out, not when the
// long renewal gives up.
func TestWatchdogLosesShortLockOnTimeBehindLongRenewal(t *testing.T) {
	srv := redistest.Start(t)
	const long, short = 3 * time.Second, 300 * time.Millisecond
	st := &pauseOnExtend{Store: core.NewRedisStore(srv.Client(t)), ttl: long, srv: srv}
	l := newLocker(st, core.WithTTL(short))
	ctx := ctxT(t, 10*time.Second)

	a, err := l.TryObtain(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release(ctx) // after Resume: a held lock keeps the watchdog running
	t0 := time.Now()
	if err := a.Refresh(ctx, long); err != nil { // a's next renewal: about t0+1s
		t.Fatal(err)
	}
	st.armed.Store(true)
	time.Sleep(time.Until(t0.Add(970 * time.Millisecond)))
	b, err := l.TryObtain(ctx, "b") // due after a's renewal has started, so not in its batch
	if err != nil {
		t.Fatal(err)
	}
	bEnd := time.Now().Add(short)
	defer srv.Resume()
	select {
	case <-b.Lost():
		if late := time.Since(bEnd); late > 100*time.Millisecond {
			t.Fatalf("b (lease %v) declared lost %v after its lease ran out", short, late)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("b never lost")
	}
}

// failingExtends makes every renewal fail for a transient reason, on demand,
// and counts the attempts.
type failingExtends struct {
	core.Store
	fail  atomic.Bool
	tries atomic.Int64
}

func (s *failingExtends) Extend(ctx context.Context, ls []core.Lease) []core.Renewal {
	if !s.fail.Load() {
		return s.Store.Extend(ctx, ls)
	}
	s.tries.Add(1)
	out := make([]core.Renewal, len(ls))
	for i := range out {
		out[i].Err = errors.New("connection reset")
	}
	return out
}

// After a failed renewal the watchdog retries at a tenth of the lease, not
// in a tight loop against a store that is already struggling.
func TestWatchdogRetriesAtAGap(t *testing.T) {
	fs := &failingExtends{Store: core.NewMemoryStore()}
	l := newLocker(fs, core.WithTTL(300*time.Millisecond))
	lk, err := l.TryObtain(ctxT(t, 5*time.Second), "k")
	if err != nil {
		t.Fatal(err)
	}
	fs.fail.Store(true)
	<-lk.Lost()
	// About ten tries fit in a lease; a storm makes thousands.
	if n := fs.tries.Load(); n > 30 {
		t.Fatalf("%d renewal attempts within one 300ms lease", n)
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

func (s *heldReply) Extend(ctx context.Context, ls []core.Lease) []core.Renewal {
	if s.cut.Load() {
		out := make([]core.Renewal, len(ls))
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
	st := &heldReply{Store: core.NewRedisStore(srv.Client(t)), ttl: long,
		executed: make(chan struct{}), proceed: make(chan struct{})}
	st.armed.Store(true)
	a := newLocker(st, core.WithTTL(long))
	b := newLocker(core.NewRedisStore(srv.Client(t)), core.WithTTL(long))
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

func (s *lostReply) Extend(ctx context.Context, ls []core.Lease) []core.Renewal {
	out := make([]core.Renewal, len(ls))
	if !s.cut.Load() {
		out = s.Store.Extend(ctx, ls)
	}
	for i, l := range ls {
		if s.cut.Load() || l.TTL == s.ttl {
			out[i] = core.Renewal{Err: errors.New("i/o timeout")}
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
	st := &lostReply{Store: core.NewRedisStore(srv.Client(t)), ttl: short}
	a := newLocker(st, core.WithTTL(long))
	b := newLocker(core.NewRedisStore(srv.Client(t)), core.WithTTL(long))
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
