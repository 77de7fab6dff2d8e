package safety

import (
	"context"
	"testing"
	"time"

	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// Clock jumps: a server whose wall clock steps ahead expires every key at
// once, as if their leases had run out; one whose clock steps back keeps
// them longer. Redis expires keys by its wall clock, and a single Redis
// also makes fences from it.

// jumpAhead is past every lease in these scenarios.
const jumpAhead = 2 * redlockTTL

// One node of five jumps ahead while the lock is held on all five: it is a
// minority failing, and the lock lives on the other four. The second
// worker only starts after the jump, so that the holder got every node.
func redlockMinorityClockJump(t *testing.T) {
	clock := shiftedClock(t, 1)
	servers := []*redistest.Server{redistest.StartEnv(t, clock.Env())}
	servers = append(servers, redistest.StartN(t, 4)...)
	r := newRun(t, true)
	a := r.worker(locker(redlockStore(t, servers), redlockTTL), func() time.Duration { return 2 * redlockTTL })
	r.start()
	if !r.heldBy(a) {
		t.Fatal("g1 never took the lock")
	}
	time.Sleep(10 * time.Millisecond)
	if err := clock.Jump(jumpAhead); err != nil {
		t.Fatal(err)
	}
	b := r.worker(locker(redlockStore(t, servers), redlockTTL), RandomPause(2*time.Millisecond))
	b.ObtainTimeout = 20 * time.Millisecond
	r.late(b)
	r.finish("1 of 5 nodes' clock jumps 2 leases ahead, lock held on all 5", "redlock (5)", safe)
}

// The holder got a bare majority, nodes 1–3 (4 and 5 were down), and one
// of its three jumps ahead: the lock is gone there as on a node restarted
// empty, and a second worker builds a majority from it and nodes 4 and 5
// while the first still holds. The docs do not promise the fence with
// Redlock; the account measures it.
func redlockBareMajorityClockJump(t *testing.T) {
	const ttl = 3 * time.Second // g1 renews after 1s: the jump and the second acquire come before
	clock := shiftedClock(t, 1)
	servers := redistest.StartN(t, 2)
	servers = append(servers, redistest.StartEnv(t, clock.Env()))
	servers = append(servers, redistest.StartN(t, 2)...)
	r := newRun(t, true)
	servers[3].Kill()
	servers[4].Kill()
	a := r.worker(locker(redlockStore(t, servers), ttl), func() time.Duration { return 2 * time.Second })
	r.start()
	if !r.heldBy(a) {
		t.Fatal("g1 never took the lock")
	}
	servers[3].Restart() // empty: they hold nothing of g1's
	servers[4].Restart()
	if err := clock.Jump(2 * ttl); err != nil {
		t.Fatal(err)
	}
	b := r.worker(locker(redlockStore(t, servers), ttl), RandomPause(2*time.Millisecond))
	b.ObtainTimeout = 20 * time.Millisecond
	r.late(b)
	r.finish("1 of the holder's bare 3 of 5 nodes' clock jumps 2 leases ahead", "redlock (5)", expect{
		overlap: must, lateLost: must, stale: may, lostUpd: may, refused: may})
}

// A single Redis whose clock jumps ahead past the lease while a lock is
// held frees it at once: a second worker takes it while the first still
// holds, until its next renewal fails. The fence, max(last + 1, the
// server's clock in µs), keeps growing, and the first holder's late write
// is refused.
func redisClockJumpAhead(t *testing.T) {
	clock := shiftedClock(t, 1)
	srv := redistest.StartEnv(t, clock.Env())
	r := newRun(t, true)
	a := r.worker(locker(redisstore.New(client(t, srv.Addr)), time.Second), func() time.Duration { return 2 * time.Second })
	b := r.worker(locker(redisstore.New(client(t, srv.Addr)), time.Second), RandomPause(2*time.Millisecond))
	b.ObtainTimeout = 20 * time.Millisecond // asks afresh rather than wait out the lease Redis reported
	r.start()
	r.faultsUntilDone(func() {
		if !r.heldBy(a) {
			return
		}
		time.Sleep(10 * time.Millisecond)
		if err := clock.Jump(jumpAhead); err != nil {
			t.Error(err)
		}
	})
	r.finish("server clock jumps 2 leases ahead while held", "redis", expect{
		overlap: must, lateLost: must, stale: never, lostUpd: never, refused: must})
}

// A single Redis whose clock steps back an hour while a lock is held keeps
// the key longer; its holder still releases it. The fence counter is
// there, so fences go on from last + 1: safe. When the counter is lost too
// (deleted here, as its expiry would), fences restart from the server's
// clock, an hour behind every fence the account has seen: the account
// refuses each holder from then on. That is what the docs say the fence
// does not survive: a clock stepping back by more than the time since the
// counter was lost. The store reads the server's clock at most once a
// second and reckons it in between, so the counter is deleted only once
// every reading a store still uses was taken after the step.
// clockReadings is longer than a Redis store uses one reading of the
// server's clock (a second).
const clockReadings = 1500 * time.Millisecond

func redisClockStepBack(t *testing.T, counterLost bool) {
	clock := shiftedClock(t, 1)
	srv := redistest.StartEnv(t, clock.Env())
	admin := srv.Client(t)
	r := newRun(t, true)
	a := r.worker(locker(redisstore.New(client(t, srv.Addr)), time.Second), RandomPause(2*time.Millisecond))
	b := r.worker(locker(redisstore.New(client(t, srv.Addr)), time.Second), RandomPause(2*time.Millisecond))
	b.ObtainTimeout = 20 * time.Millisecond
	if counterLost {
		r.until = r.until.Add(clockReadings) // the load goes on past the wait below
	}
	r.start()
	if !r.heldBy(a) {
		t.Fatal("g1 never took the lock")
	}
	if err := clock.Jump(-time.Hour); err != nil {
		t.Fatal(err)
	}
	if !counterLost {
		r.finish("server clock steps back 1h while held", "redis", safe)
		return
	}
	time.Sleep(clockReadings) // past the stores' readings of the clock from before the step
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counters, err := admin.Keys(ctx, "*:fence").Result()
	if err != nil || len(counters) == 0 {
		t.Fatalf("no fence counter to delete: %v, %v", counters, err)
	}
	if err := admin.Del(ctx, counters...).Err(); err != nil {
		t.Fatal(err)
	}
	r.finish("server clock steps back 1h, then the fence counter is lost", "redis", expect{readRefused: must})
}

func redisClockStepBackCounterKept(t *testing.T) { redisClockStepBack(t, false) }
func redisClockStepBackCounterLost(t *testing.T) { redisClockStepBack(t, true) }
