package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// With WithReplicaAcks an acquire counts only once the replica has the lock:
// with the replica frozen, the lock is refused as unavailable and nothing is
// left on the master.
func TestSentinelReplicaAcks(t *testing.T) {
	sn := redistest.StartSentinel(t)
	fc := sn.Client(t)
	// Generous while the replica is live (a loaded CI machine may take a
	// while to ack), short while it is frozen (it can only time out).
	live := newLocker(redisstore.New(fc).WithReplicaAcks(1, 2*time.Second))
	l := newLocker(redisstore.New(fc).WithReplicaAcks(1, 100*time.Millisecond))
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
	if !errors.Is(err, core.ErrUnavailable) || !errors.Is(err, redisstore.ErrNotReplicated) || errors.Is(err, core.ErrNotObtained) {
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
	s := redisstore.New(c).WithReplicaAcks(1, 5*time.Millisecond)
	ctx := ctxT(t, 5*time.Second)
	_, err := s.Acquire(ctx, store.Lease{Key: "reqlock:{solo}", Token: "t", TTL: time.Second})
	if !errors.Is(err, redisstore.ErrNotReplicated) {
		t.Fatalf("Acquire: %v, want ErrNotReplicated", err)
	}
	if n, err := c.Exists(ctx, "reqlock:{solo}").Result(); err != nil || n != 0 {
		t.Fatalf("the store left its unconfirmed lock behind (%d, %v)", n, err)
	}
	// The same after the server lost its scripts (a restart, a failover).
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	_, err = s.Acquire(ctx, store.Lease{Key: "reqlock:{solo}", Token: "t2", TTL: time.Second})
	if !errors.Is(err, redisstore.ErrNotReplicated) {
		t.Fatalf("Acquire after SCRIPT FLUSH: %v, want ErrNotReplicated", err)
	}
	if n, err := c.Exists(ctx, "reqlock:{solo}").Result(); err != nil || n != 0 {
		t.Fatalf("after SCRIPT FLUSH the store left its lock behind (%d, %v)", n, err)
	}
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": c.Options().Addr}})
	defer ring.Close()
	for name, f := range map[string]func(){
		"n":       func() { redisstore.New(c).WithReplicaAcks(0, time.Second) },
		"timeout": func() { redisstore.New(c).WithReplicaAcks(1, 0) },
		"client":  func() { redisstore.New(ring).WithReplicaAcks(1, time.Second) },
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
	s := redisstore.New(c).WithReplicaAcks(1, time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := s.Acquire(ctx, store.Lease{Key: "reqlock:{deadline}", Token: "t", TTL: 10 * time.Second})
	if !errors.Is(err, redisstore.ErrNotReplicated) || errors.Is(err, context.DeadlineExceeded) {
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
	opts.ReadTimeout, opts.MaxRetries = time.Second, 3
	c := redis.NewClient(opts)
	defer c.Close()
	ctx := ctxT(t, 10*time.Second)
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	s := redisstore.New(c).WithReplicaAcks(1, time.Minute)
	_, err := s.Acquire(context.Background(), store.Lease{Key: "reqlock:{read}", Token: "t", TTL: 10 * time.Second})
	if !errors.Is(err, redisstore.ErrNotReplicated) {
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

// After the master lost its scripts (a restart, a failover), the acquire
// goes again whole, with WAIT again behind it on the same connection: WAIT
// counts the writes of its own connection, so one sent on another would be
// answered at once by a replica that never saw the lock. A pool that hands
// out its connections in turn makes that other connection the next one.
func TestSentinelReplicaAcksAfterScriptFlush(t *testing.T) {
	sn := redistest.StartSentinel(t)
	opts := sn.FailoverOptions()
	opts.PoolFIFO = true
	fc := redis.NewFailoverClient(opts)
	defer fc.Close()
	ctx := ctxT(t, 10*time.Second)
	// Several idle connections in the pool.
	var conns []*redis.Conn
	for range 4 {
		cn := fc.Conn()
		if err := cn.Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, cn)
	}
	for _, cn := range conns {
		_ = cn.Close()
	}
	s := redisstore.New(fc).WithReplicaAcks(1, time.Second)
	// The first acquire, with the replica live, teaches the store that the
	// master has the script.
	if _, err := s.Acquire(ctx, store.Lease{Key: "reqlock:{flush}", Token: "t1", TTL: 10 * time.Second}); err != nil {
		t.Fatalf("Acquire with a live replica: %v", err)
	}
	if err := s.Release(ctx, "reqlock:{flush}", "t1"); err != nil {
		t.Fatal(err)
	}

	master, err := sn.Master(ctx)
	if err != nil {
		t.Fatal(err)
	}
	replica := sn.Data[1]
	if master == replica {
		replica = sn.Data[0]
	}
	replica.Pause()
	defer replica.Resume()
	if err := master.Client(t).ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	_, err = s.Acquire(ctx, store.Lease{Key: "reqlock:{flush}", Token: "t2", TTL: 10 * time.Second})
	if !errors.Is(err, redisstore.ErrNotReplicated) {
		t.Fatalf("Acquire after SCRIPT FLUSH with the replica frozen: %v, want ErrNotReplicated", err)
	}
	if n, err := fc.Exists(ctx, "reqlock:{flush}").Result(); err != nil || n != 0 {
		t.Fatalf("unconfirmed lock left on the master (%d, %v)", n, err)
	}
}

// When the script took the lock and only WAIT failed, the store gives the
// lock back before it reports the failure.
func TestReplicaAcksGiveBackWhenWaitFails(t *testing.T) {
	c := redistest.Start(t, "--rename-command", "WAIT", "").Client(t)
	s := redisstore.New(c).WithReplicaAcks(1, time.Second)
	ctx := ctxT(t, 5*time.Second)
	_, err := s.Acquire(ctx, store.Lease{Key: "reqlock:{nowait}", Token: "t", TTL: 10 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Fatalf("Acquire on a server without WAIT: %v, want its error", err)
	}
	if n, err := c.Exists(ctx, "reqlock:{nowait}").Result(); err != nil || n != 0 {
		t.Fatalf("the lock the script took is still there (%d, %v)", n, err)
	}
	l := newLocker(s)
	if _, err := l.TryObtain(ctx, "k"); !errors.Is(err, core.ErrUnavailable) {
		t.Fatalf("TryObtain: %v, want ErrUnavailable", err)
	}
}
