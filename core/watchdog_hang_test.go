package core_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// pauseOwnerOnExtend stops (SIGSTOP) the Cluster master that owns a given
// lock key as soon as a renewal of that key starts: its renewal then hangs
// on a real, stopped server.
type pauseOwnerOnExtend struct {
	core.Store
	key   string
	owner *redistest.Server
	armed atomic.Bool
}

func (s *pauseOwnerOnExtend) Extend(ctx context.Context, ls []store.Lease) []store.Renewal {
	for _, l := range ls {
		if l.Key == s.key && s.armed.CompareAndSwap(true, false) {
			s.owner.Pause()
			break
		}
	}
	return s.Store.Extend(ctx, ls)
}

// One master of a Cluster stops while a renewal waits on it. A short lock
// of the same Locker on a healthy master must never be held by someone else
// while its holder still believes it holds it: it is renewed, or it is
// declared lost by its own deadline, whatever the hung renewal is doing.
func TestWatchdogClusterMasterStoppedMidRenewal(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	cc := cl.Client(t)
	ctx := ctxT(t, 20*time.Second)
	const long, short = 3 * time.Second, 300 * time.Millisecond
	probe := newLocker(redisstore.New(cc))

	// Two keys on different masters.
	var slowKey, fastKey string
	var slowOwner *redistest.Server
	for i := 0; fastKey == ""; i++ {
		k := fmt.Sprintf("user:%d", i)
		skey, _ := probe.StoreKey(k)
		_, owner := cl.KeyOwner(t, skey)
		switch {
		case slowKey == "":
			slowKey, slowOwner = k, owner
		case owner != slowOwner:
			fastKey = k
		}
	}
	slowSkey, _ := probe.StoreKey(slowKey)
	st := &pauseOwnerOnExtend{Store: redisstore.New(cc), key: slowSkey, owner: slowOwner}
	l := newLocker(st, core.WithTTL(short))

	slow, err := l.TryObtain(ctx, slowKey)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if err := slow.Refresh(ctx, long); err != nil { // its next renewal: about t0+1s
		t.Fatal(err)
	}
	st.armed.Store(true)
	time.Sleep(time.Until(t0.Add(970 * time.Millisecond)))
	fast, err := l.TryObtain(ctx, fastKey) // added while the slow renewal hangs
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		slowOwner.Resume()
		cl.WaitHealthy(t)
		_ = fast.Release(ctx)
		_ = slow.Release(ctx)
	}()

	// Another Locker tries for fastKey for two seconds, many leases of it.
	other := newLocker(redisstore.New(cc), core.WithTTL(short))
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		next, err := other.TryObtain(ctx, fastKey)
		if err == nil {
			select {
			case <-fast.Lost():
			default:
				t.Fatal("another holder has the fast lock and its holder still believes it holds it")
			}
			_ = next.Release(ctx)
			return
		}
		if !errors.Is(err, core.ErrNotObtained) {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Better still: the healthy master kept renewing it.
	select {
	case <-fast.Lost():
		t.Fatal("the fast lock was lost, yet nobody else could take it")
	default:
	}
}
