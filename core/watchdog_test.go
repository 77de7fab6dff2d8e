package core_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore"
)

// pauseOnExtend pauses the server as soon as the watchdog renews a lease of
// a given length: Redis hangs in the middle of that renewal.
type pauseOnExtend struct {
	core.Store
	ttl   time.Duration
	armed atomic.Bool
	srv   *redistest.Server
}

func (s *pauseOnExtend) Extend(ctx context.Context, ls []store.Lease) []store.Renewal {
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
	st := &pauseOnExtend{Store: redisstore.New(srv.Client(t)), ttl: long, srv: srv}
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

func (s *failingExtends) Extend(ctx context.Context, ls []store.Lease) []store.Renewal {
	if !s.fail.Load() {
		return s.Store.Extend(ctx, ls)
	}
	s.tries.Add(1)
	out := make([]store.Renewal, len(ls))
	for i := range out {
		out[i].Err = errors.New("connection reset")
	}
	return out
}

// After a failed renewal the watchdog retries at a tenth of the lease, not
// in a tight loop against a store that is already struggling.
func TestWatchdogRetriesAtAGap(t *testing.T) {
	fs := &failingExtends{Store: memorystore.New()}
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
