package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// Lockers keep working through a Sentinel failover. During it some calls
// may fail as unavailable, or find at release that their lock is gone: it
// was taken on the old master after the replica stopped following it, the
// asynchronous-replication gap that WithReplicaAcks narrows. Nothing else
// goes wrong, and afterwards every call succeeds against the new master.
func TestSentinelFailoverDuringRun(t *testing.T) {
	sn := redistest.StartSentinel(t)
	store := redisstore.New(sn.Client(t))
	l := newLocker(store, core.WithTTL(time.Second),
		core.WithRetry(backoff.Exponential(time.Millisecond, 20*time.Millisecond)))
	ctx := ctxT(t, 30*time.Second)

	var ok, unavailable, gone atomic.Int32
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				err := l.Do(ctx, fmt.Sprintf("job-%d-%d", g, i%3), func(context.Context) error {
					time.Sleep(time.Millisecond)
					return nil
				})
				switch {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, core.ErrUnavailable):
					unavailable.Add(1)
					time.Sleep(10 * time.Millisecond)
				case errors.Is(err, core.ErrNotHeld), errors.Is(err, core.ErrLockLost):
					gone.Add(1)
				default:
					t.Errorf("Do during failover: %v", err)
					return
				}
			}
		})
	}
	time.Sleep(100 * time.Millisecond)
	before := ok.Load()
	newMaster := sn.Failover(t)
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	t.Logf("%d locked runs (%d before the failover); during it %d unavailable, %d locks gone at release",
		ok.Load(), before, unavailable.Load(), gone.Load())
	if before == 0 || ok.Load() == before {
		t.Fatalf("no progress: %d runs before the failover, %d in all", before, ok.Load())
	}

	// Once the client has heard of the switch, every call works, and the
	// locks live on the new master.
	nm := newMaster.Client(t)
	probe, _ := l.StoreKey("probe")
	for i := 0; ; i++ {
		lk, err := l.TryObtain(ctx, "probe")
		if err == nil {
			v, _ := nm.Get(ctx, probe).Result()
			_ = lk.Release(ctx)
			if v == lk.Token() {
				break
			}
		}
		if i == 100 {
			t.Fatalf("the client never moved to the new master: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for i := range 20 {
		key := fmt.Sprintf("after-%d", i)
		lk, err := l.TryObtain(ctx, key)
		if err != nil {
			t.Fatalf("TryObtain after failover: %v", err)
		}
		skey, _ := l.StoreKey(key)
		if v, err := nm.Get(ctx, skey).Result(); err != nil || v != lk.Token() {
			t.Fatalf("lock not on the new master: %q, %v", v, err)
		}
		if _, err := newLocker(store).TryObtain(ctx, key); !errors.Is(err, core.ErrNotObtained) {
			t.Fatalf("contender after failover: %v", err)
		}
		if err := lk.Release(ctx); err != nil {
			t.Fatalf("Release after failover: %v", err)
		}
	}
}
