package redlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore/redlock"
)

// startRedlock starts n independent masters and returns them with a client
// for each.
func startRedlock(t testing.TB, n int) ([]*redistest.Server, []redis.UniversalClient) {
	t.Helper()
	servers := redistest.StartN(t, n)
	clients := make([]redis.UniversalClient, n)
	for i, s := range servers {
		clients[i] = s.Client(t)
	}
	return servers, clients
}

// holders counts the nodes on which key holds token.
func holders(t *testing.T, clients []redis.UniversalClient, key, token string) int {
	t.Helper()
	n := 0
	for _, c := range clients {
		if v, err := c.Get(context.Background(), key).Result(); err == nil && v == token {
			n++
		}
	}
	return n
}

// With two of five masters down the quorum of three still locks, renews and
// releases.
func TestRedlockTwoDown(t *testing.T) {
	servers, clients := startRedlock(t, 5)
	servers[1].Kill()
	servers[3].Kill()
	ctx := ctxT(t, 10*time.Second)
	l := newLocker(redlock.New(clients...), core.WithTTL(300*time.Millisecond))

	lk, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatalf("TryObtain: %v", err)
	}
	skey, _ := l.StoreKey("k")
	if n := holders(t, clients, skey, lk.Token()); n != 3 {
		t.Fatalf("lock on %d nodes, want 3", n)
	}
	if _, err := newLocker(redlock.New(clients...)).TryObtain(ctx, "k"); !errors.Is(err, core.ErrNotObtained) {
		t.Fatalf("second holder: %v, want ErrNotObtained", err)
	}
	if err := lk.Refresh(ctx, 400*time.Millisecond); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	select { // the watchdog keeps it for several leases
	case <-lk.Lost():
		t.Fatal("lost with three of five nodes up")
	case <-time.After(time.Second):
	}
	if left, err := lk.TTL(ctx); err != nil || left <= 0 {
		t.Fatalf("TTL = %v, %v", left, err)
	}
	if err := lk.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if n := holders(t, clients, skey, lk.Token()); n != 0 {
		t.Fatalf("lock left on %d nodes after release", n)
	}
}

// With three of five down there is no quorum: refused at once as a store
// failure (not "taken"), within the caller's deadline, and nothing is left
// behind on the two nodes that said yes.
func TestRedlockThreeDownRefused(t *testing.T) {
	servers, clients := startRedlock(t, 5)
	for _, s := range servers[:3] {
		s.Kill()
	}
	l := newLocker(redlock.New(clients...))
	skey, _ := l.StoreKey("k")

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	for _, obtain := range []func(context.Context, string) (*core.Lock, error){l.TryObtain, l.Obtain} {
		_, err := obtain(ctx, "k")
		if !errors.Is(err, core.ErrUnavailable) || errors.Is(err, core.ErrNotObtained) {
			t.Fatalf("err = %v, want ErrUnavailable", err)
		}
		if ctx.Err() != nil {
			t.Fatal("the refusal took the whole deadline")
		}
	}
	for _, c := range clients[3:] {
		if n, err := c.Exists(context.Background(), skey).Result(); err != nil || n != 0 {
			t.Fatalf("failed attempt left its lock behind (%d, %v)", n, err)
		}
	}
}

// Three paused masters (SIGSTOP: connections open, nothing answers) must not
// hang a caller either: each node gets the node timeout, and no more.
func TestRedlockThreePausedRefused(t *testing.T) {
	servers, clients := startRedlock(t, 5)
	for _, s := range servers[:3] {
		s.Pause()
		t.Cleanup(s.Resume)
	}
	const nodeTimeout = 100 * time.Millisecond
	l := newLocker(redlock.New(clients...).WithNodeTimeout(nodeTimeout))
	start := time.Now()
	_, err := l.TryObtain(ctxT(t, 10*time.Second), "k")
	if !errors.Is(err, core.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want ErrUnavailable from node timeouts", err)
	}
	// An upper bound against a hang, loose for loaded CI machines: the
	// attempt plus the release of what it may have taken, a node timeout
	// each.
	if d := time.Since(start); d > 2*nodeTimeout+time.Second {
		t.Fatalf("refusal took %v with a node timeout of %v", d, nodeTimeout)
	}
}

// One paused master costs at most the node timeout; the lock is taken on the
// other four and is valid for the lease minus that.
func TestRedlockOnePausedCostsNodeTimeout(t *testing.T) {
	servers, clients := startRedlock(t, 5)
	servers[2].Pause()
	t.Cleanup(servers[2].Resume)
	const nodeTimeout = 100 * time.Millisecond
	s := redlock.New(clients...).WithNodeTimeout(nodeTimeout)
	ctx := ctxT(t, 10*time.Second)

	start := time.Now()
	g, err := s.Acquire(ctx, store.Lease{Key: "reqlock:{paused}", Token: "t1", TTL: 10 * time.Second})
	took := time.Since(start)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if took > nodeTimeout+time.Second { // loose: a hang would be the 2s ReadTimeout or the lease
		t.Fatalf("Acquire took %v with a node timeout of %v", took, nodeTimeout)
	}
	if g.Validity <= 0 || g.Validity > 10*time.Second-took {
		t.Fatalf("validity %v after %v", g.Validity, took)
	}
	// Acquire answers once a quorum granted; the fourth live node follows.
	live := func() int {
		return holders(t, clients[:2], "reqlock:{paused}", "t1") + holders(t, clients[3:], "reqlock:{paused}", "t1")
	}
	for deadline := time.Now().Add(time.Second); live() != 4 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if n := live(); n != 4 {
		t.Fatalf("lock on %d live nodes, want 4", n)
	}
	if err := s.Release(ctx, "reqlock:{paused}", "t1"); err != nil {
		t.Fatalf("Release: %v", err)
	}
}

// Losing the quorum while holding makes the watchdog give the lock up before
// its validity runs out, so no one else can have it while we think we do.
func TestRedlockQuorumLostFiresLost(t *testing.T) {
	servers, clients := startRedlock(t, 5)
	const ttl = time.Second
	l := newLocker(redlock.New(clients...), core.WithTTL(ttl))
	ctx := ctxT(t, 10*time.Second)
	var cause error
	killed := make(chan time.Time, 1)
	err := l.Do(ctx, "k", func(ctx context.Context) error {
		time.Sleep(ttl / 2) // at least one renewal has happened
		at := time.Now()
		for _, s := range servers[:3] {
			s.Kill()
		}
		killed <- at
		<-ctx.Done()
		cause = context.Cause(ctx)
		return nil
	})
	lostAt := time.Now()
	if !errors.Is(err, core.ErrLockLost) || !errors.Is(cause, core.ErrLockLost) {
		t.Fatalf("Do: %v, cause %v; want ErrLockLost", err, cause)
	}
	// The last renewal before the kill started before it, so the validity
	// it granted ended before kill + ttl − drift.
	if d := lostAt.Sub(<-killed); d > ttl {
		t.Fatalf("lost %v after the quorum went away, later than the lease %v", d, ttl)
	}
}

// A Redlock conflict says how long until the holder's copies free a quorum.
func TestRedlockConflictRemaining(t *testing.T) {
	_, clients := startRedlock(t, 5)
	s := redlock.New(clients...)
	ctx := ctxT(t, 10*time.Second)
	key := "reqlock:{remaining}"
	// Plant holders by hand with different leases on each node: the third
	// shortest (quorum = 3) is when three nodes are free.
	for i, ms := range []int{1000, 5000, 3000, 4000, 2000} {
		if err := clients[i].Set(ctx, key, "other", time.Duration(ms)*time.Millisecond).Err(); err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.Acquire(ctx, store.Lease{Key: key, Token: "me", TTL: time.Second})
	left, ok := core.HolderTTL(err)
	if !errors.Is(err, core.ErrNotObtained) || !ok || left <= 2*time.Second || left > 3*time.Second {
		t.Fatalf("err %v, remaining %v, want ErrNotObtained with about 3s", err, left)
	}
	// A split vote (two ours, three theirs) is "taken", and ours are undone;
	// one more free node makes a quorum: the shortest of theirs, 3s.
	// A fresh token, as every attempt has: the failed one cancelled "me".
	clients[0].Del(ctx, key)
	clients[4].Del(ctx, key)
	_, err = s.Acquire(ctx, store.Lease{Key: key, Token: "me again", TTL: time.Second})
	if left, _ := core.HolderTTL(err); !errors.Is(err, core.ErrNotObtained) || left <= 2*time.Second || left > 3*time.Second {
		t.Fatalf("split vote: %v, want ErrNotObtained with about 3s", err)
	}
	if n := holders(t, clients, key, "me again"); n != 0 {
		t.Fatalf("failed attempt left its lock on %d nodes", n)
	}
}

// Extend tells a lock that is gone from a quorum (ErrNotHeld: lost for good)
// from one it cannot reach (a transient error the watchdog retries).
func TestRedlockExtendVerdicts(t *testing.T) {
	servers, clients := startRedlock(t, 5)
	s := redlock.New(clients...)
	ctx := ctxT(t, 10*time.Second)
	l := store.Lease{Key: "reqlock:{extend}", Token: "me", TTL: 2 * time.Second}
	if _, err := s.Acquire(ctx, l); err != nil {
		t.Fatal(err)
	}
	servers[0].Kill()
	servers[1].Kill()
	clients[2].Del(ctx, l.Key) // two down, one forgot: 2 ours, 1 not, 2 unknown
	if r := s.Extend(ctx, []store.Lease{l})[0]; r.Err == nil || errors.Is(r.Err, core.ErrNotHeld) {
		t.Fatalf("extend without a quorum either way: %v, want a transient error", r.Err)
	}
	clients[3].Del(ctx, l.Key) // now 2 say "not ours": a quorum is out of reach
	clients[4].Del(ctx, l.Key)
	if r := s.Extend(ctx, []store.Lease{l})[0]; !errors.Is(r.Err, core.ErrNotHeld) {
		t.Fatalf("extend after the lock left a quorum: %v, want ErrNotHeld", r.Err)
	}
}

func TestRedlockStoreRejectsBadClients(t *testing.T) {
	c := redistest.Start(t).Client(t)
	for name, f := range map[string]func(){
		"none":      func() { redlock.New() },
		"nil":       func() { redlock.New(c, nil) },
		"duplicate": func() { redlock.New(c, c) },
		"timeout":   func() { redlock.New(c).WithNodeTimeout(0) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// The delayed-restart rule. Three masters, C down; the first client locks
// on A and B. B crashes and loses the lock (no persistence). Restarted at
// once, B lets a second client build a quorum from B and C while the first
// still holds the lock: two holders. Kept down for the longest lease, B
// comes back only once the first lock has expired, and meanwhile nobody
// gets a quorum.
func TestRedlockDelayedRestart(t *testing.T) {
	const ttl = 1500 * time.Millisecond // room for two restarts before it runs out
	for _, delayed := range []bool{false, true} {
		t.Run(map[bool]string{false: "immediate", true: "delayed"}[delayed], func(t *testing.T) {
			servers, clients := startRedlock(t, 3)
			ctx := ctxT(t, 10*time.Second)
			servers[2].Kill()
			first, err := newLocker(redlock.New(clients...), core.WithTTL(ttl), core.WithoutWatchdog()).TryObtain(ctx, "k")
			if err != nil {
				t.Fatal(err)
			}
			servers[1].Kill()

			// Fresh clients: the second client has no pooled connections
			// to the dead servers.
			fresh := func() *core.Locker {
				var cs []redis.UniversalClient
				for _, s := range servers {
					cs = append(cs, s.Client(t))
				}
				return newLocker(redlock.New(cs...), core.WithTTL(ttl))
			}
			if delayed {
				servers[2].Restart()
				if _, err := fresh().TryObtain(ctx, "k"); !errors.Is(err, core.ErrNotObtained) {
					t.Fatalf("with B still down: %v, want ErrNotObtained", err)
				}
				<-first.Lost() // wait out the longest lease before B rejoins
				servers[1].Restart()
			} else {
				servers[1].Restart()
				servers[2].Restart()
			}

			second, err := fresh().TryObtain(ctx, "k")
			if err != nil {
				t.Fatalf("second client: %v", err)
			}
			defer second.Release(ctx)
			select {
			case <-first.Lost():
				if !delayed {
					t.Fatal("the first lock ran out before the second was granted: the hazard did not show")
				}
			default:
				if delayed {
					t.Fatal("two holders despite the delayed restart")
				}
				t.Logf("two holders at once: fences %d and %d", first.Fence(), second.Fence())
			}
		})
	}
}
