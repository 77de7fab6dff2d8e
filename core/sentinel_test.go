package core_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/redis/go-redis/v9"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
)

// Lockers keep working through a Sentinel failover. During it some calls
// may fail as unavailable, or find at release that their lock is gone: it
// was taken on the old master after the replica stopped following it, the
// asynchronous-replication gap that WithReplicaAcks narrows. Nothing else
// goes wrong, and afterwards every call succeeds against the new master.
func TestSentinelFailoverDuringRun(t *testing.T) {
	sn := redistest.StartSentinel(t)
	store := core.NewRedisStore(sn.Client(t))
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

// With WithReplicaAcks an acquire counts only once the replica has the lock:
// with the replica frozen, the lock is refused as unavailable and nothing is
// left on the master.
func TestSentinelReplicaAcks(t *testing.T) {
	sn := redistest.StartSentinel(t)
	fc := sn.Client(t)
	// Generous while the replica is live (a loaded CI machine may take a
	// while to ack), short while it is frozen (it can only time out).
	live := newLocker(core.NewRedisStore(fc).WithReplicaAcks(1, 2*time.Second))
	l := newLocker(core.NewRedisStore(fc).WithReplicaAcks(1, 100*time.Millisecond))
	ctx := ctxT(t, 10*time.Second)

	lk, err := live.TryObtain(ctx, "k")
	if err != nil {
		t.Fatalf("TryObtain with a live replica: %v", err)
	}
	if err := lk.Release(ctx); err != nil {
		t.Fatal(err)
	}

	replica := sn.Data[1]
	replica.Pause()
	defer replica.Resume()
	_, err = l.TryObtain(ctx, "k")
	if !errors.Is(err, core.ErrUnavailable) || !errors.Is(err, core.ErrNotReplicated) || errors.Is(err, core.ErrNotObtained) {
		t.Fatalf("TryObtain with the replica frozen: %v, want ErrUnavailable and ErrNotReplicated", err)
	}
	skey, _ := l.StoreKey("k")
	if n, err := fc.Exists(ctx, skey).Result(); err != nil || n != 0 {
		t.Fatalf("unconfirmed lock left on the master (%d, %v)", n, err)
	}
	// Someone else's lock is still "taken", not a replication failure.
	if err := fc.Set(ctx, skey, "other", time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.TryObtain(ctx, "k"); !errors.Is(err, core.ErrNotObtained) {
		t.Fatalf("TryObtain of a held lock: %v, want ErrNotObtained", err)
	}
}

// On a node without replicas WAIT can only time out.
func TestReplicaAcksWithoutReplicas(t *testing.T) {
	c := redistest.Start(t).Client(t)
	s := core.NewRedisStore(c).WithReplicaAcks(1, 5*time.Millisecond)
	ctx := ctxT(t, 5*time.Second)
	_, err := s.Acquire(ctx, core.Lease{Key: "reqlock:{solo}", Token: "t", TTL: time.Second})
	if !errors.Is(err, core.ErrNotReplicated) {
		t.Fatalf("Acquire: %v, want ErrNotReplicated", err)
	}
	if n, err := c.Exists(ctx, "reqlock:{solo}").Result(); err != nil || n != 0 {
		t.Fatalf("the store left its unconfirmed lock behind (%d, %v)", n, err)
	}
	// The same after the server lost its scripts (a restart, a failover).
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	_, err = s.Acquire(ctx, core.Lease{Key: "reqlock:{solo}", Token: "t2", TTL: time.Second})
	if !errors.Is(err, core.ErrNotReplicated) {
		t.Fatalf("Acquire after SCRIPT FLUSH: %v, want ErrNotReplicated", err)
	}
	if n, err := c.Exists(ctx, "reqlock:{solo}").Result(); err != nil || n != 0 {
		t.Fatalf("after SCRIPT FLUSH the store left its lock behind (%d, %v)", n, err)
	}
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": c.Options().Addr}})
	defer ring.Close()
	for name, f := range map[string]func(){
		"n":       func() { core.NewRedisStore(c).WithReplicaAcks(0, time.Second) },
		"timeout": func() { core.NewRedisStore(c).WithReplicaAcks(1, 0) },
		"client":  func() { core.NewRedisStore(ring).WithReplicaAcks(1, time.Second) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("WithReplicaAcks with a bad %s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// WAIT never outlasts the caller's deadline: with no replica and a WAIT
// timeout far past the deadline, Redis still answers in time, so the
// acquire says "not replicated" (not a timeout) and keeps nothing.
func TestReplicaAcksWaitWithinDeadline(t *testing.T) {
	c := redistest.Start(t).Client(t)
	s := core.NewRedisStore(c).WithReplicaAcks(1, time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := s.Acquire(ctx, core.Lease{Key: "reqlock:{deadline}", Token: "t", TTL: 10 * time.Second})
	if !errors.Is(err, core.ErrNotReplicated) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire: %v, want ErrNotReplicated", err)
	}
	if n, err := c.Exists(ctxT(t, time.Second), "reqlock:{deadline}").Result(); err != nil || n != 0 {
		t.Fatalf("unconfirmed lock left behind (%d, %v)", n, err)
	}
}

// WAIT never outlasts the client's ReadTimeout either: a read that timed
// out would make go-redis, with retries on, send the acquire and WAIT again.
func TestReplicaAcksWaitWithinReadTimeout(t *testing.T) {
	srv := redistest.Start(t)
	opts := redistest.ClientOptions(srv.Addr)
	opts.ReadTimeout, opts.MaxRetries = 300*time.Millisecond, 3
	c := redis.NewClient(opts)
	defer c.Close()
	ctx := ctxT(t, 10*time.Second)
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	s := core.NewRedisStore(c).WithReplicaAcks(1, time.Minute)
	_, err := s.Acquire(context.Background(), core.Lease{Key: "reqlock:{read}", Token: "t", TTL: 10 * time.Second})
	if !errors.Is(err, core.ErrNotReplicated) {
		t.Fatalf("Acquire: %v, want ErrNotReplicated", err)
	}
	stats, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stats, "cmdstat_wait:calls=1,") {
		t.Fatalf("WAIT ran other than once:\n%s", stats)
	}
}
