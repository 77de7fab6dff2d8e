package redisstore_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// Lock keys land all over the slot space, and on every master, while each
// lock shares its slot with its fence counter (the scripts touch both).
func TestClusterKeysSpreadOverSlots(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	cc := cl.Client(t)
	ctx := ctxT(t, 20*time.Second)
	l := newLocker(redisstore.New(cc))

	const n = 200
	slots := make(map[int64]bool)
	for i := range n {
		key := fmt.Sprintf("user:%d", i)
		lk, err := l.TryObtain(ctx, key)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		defer lk.Release(ctx)
		skey, _ := l.StoreKey(key)
		slot, err := cc.ClusterKeySlot(ctx, skey).Result()
		if err != nil {
			t.Fatal(err)
		}
		if fslot, _ := cc.ClusterKeySlot(ctx, skey+":fence").Result(); fslot != slot {
			t.Fatalf("%s: lock in slot %d, fence in %d", key, slot, fslot)
		}
		slots[slot] = true
	}
	// 200 keys over 16384 slots: collisions are rare, so nearly all distinct.
	if len(slots) < n*9/10 {
		t.Fatalf("%d keys in only %d slots", n, len(slots))
	}
	for i, s := range cl.Servers {
		size, err := s.Client(t).DBSize(ctx).Result()
		if err != nil || size < n/10 {
			t.Fatalf("master %d holds %d keys (%v): keys are not spread", i, size, err)
		}
	}
}

// A live lock keeps working while its slot moves to another master: the
// client follows MOVED for renewals, TTL, a contender's acquire and the
// release, and the fence counter travels with the lock.
func TestClusterLockSurvivesReshard(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	cc := cl.Client(t)
	ctx := ctxT(t, 20*time.Second)
	const ttl = 300 * time.Millisecond
	st := redisstore.New(cc)
	l := newLocker(st, core.WithTTL(ttl))
	other := newLocker(st)

	lk, err := l.TryObtain(ctx, "order-7")
	if err != nil {
		t.Fatal(err)
	}
	skey, _ := l.StoreKey("order-7")
	slot, from := cl.KeyOwner(t, skey)
	to := cl.Others(from)[0]
	cl.MoveSlot(t, slot, to)
	if n, err := to.Client(t).Exists(ctx, skey, skey+":fence").Result(); err != nil || n != 2 {
		t.Fatalf("lock and fence on the new owner: %d of 2 (%v)", n, err)
	}

	// The client's slot map is stale now: the next command gets MOVED.
	if err := lk.Refresh(ctx, ttl); err != nil {
		t.Fatalf("Refresh after the move: %v", err)
	}
	if left, err := lk.TTL(ctx); err != nil || left <= 0 {
		t.Fatalf("TTL after the move: %v, %v", left, err)
	}
	if _, err := other.TryObtain(ctx, "order-7"); !errors.Is(err, core.ErrNotObtained) {
		t.Fatalf("contender after the move: %v, want ErrNotObtained", err)
	}
	select { // the watchdog renews on the new owner for several leases
	case <-lk.Lost():
		t.Fatal("lock lost after the move")
	case <-time.After(3 * ttl):
	}
	if err := lk.Release(ctx); err != nil {
		t.Fatalf("Release after the move: %v", err)
	}
	next, err := other.TryObtain(ctx, "order-7")
	if err != nil {
		t.Fatal(err)
	}
	defer next.Release(ctx)
	if next.Fence() <= lk.Fence() {
		t.Fatalf("fence went from %d to %d across the move", lk.Fence(), next.Fence())
	}
}

// While a slot is half-moved, a lock already held in it works as before (its
// keys are still on the old owner, which serves them) and a contender is
// told it is taken; a new lock in the slot is unavailable, as the README
// says: the old owner sends it on (ASK), and the new owner answers TRYAGAIN
// until both keys are there. Once the move is done, everything works again
// and the fence has travelled with the keys.
func TestClusterLockDuringSlotMigration(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	cc := cl.Client(t)
	ctx := ctxT(t, 20*time.Second)
	st := redisstore.New(cc)
	held := store.Lease{Key: "a:{migrating}", Token: "holder", TTL: 10 * time.Second}
	fresh := store.Lease{Key: "b:{migrating}", Token: "newcomer", TTL: 10 * time.Second}
	g, err := st.Acquire(ctx, held)
	if err != nil {
		t.Fatal(err)
	}
	slot, from := cl.KeyOwner(t, held.Key)
	to := cl.Others(from)[0]
	// Put the fence counter far above any clock, so that the fence after the
	// move shows the counter moved with the lock (a lost counter would
	// restart from the clock, below this).
	high := g.Fence + uint64(time.Hour.Microseconds())*24*365
	if err := cc.Set(ctx, held.Key+":fence", high, 0).Err(); err != nil {
		t.Fatal(err)
	}
	finish := cl.BeginMove(t, slot, to)

	if r := st.Extend(ctx, []store.Lease{held}); r[0].Err != nil {
		t.Fatalf("Extend while the slot moves: %v", r[0].Err)
	}
	if left, err := st.TTL(ctx, held.Key, held.Token); err != nil || left <= 0 {
		t.Fatalf("TTL while the slot moves: %v, %v", left, err)
	}
	// An acquire names the attempt's cancel marker too, which does not
	// exist: Redis answers TRYAGAIN for a key set that is partly there
	// while its slot moves, for a contender as for a new lock. Nothing is
	// taken either way.
	contender := store.Lease{Key: held.Key, Token: "contender", TTL: time.Second}
	for _, l := range []store.Lease{contender, fresh} {
		if _, err := st.Acquire(ctx, l); err == nil || !strings.HasPrefix(err.Error(), "TRYAGAIN") {
			t.Fatalf("acquire of %s while the slot moves: %v, want TRYAGAIN", l.Key, err)
		}
	}
	// A release names the key's line too, which does not exist: TRYAGAIN
	// as well, and nothing is deleted. (A Lock retries its release in the
	// background until the move ends.)
	if err := st.Release(ctx, held.Key, held.Token); err == nil || !strings.HasPrefix(err.Error(), "TRYAGAIN") {
		t.Fatalf("Release while the slot moves: %v, want TRYAGAIN", err)
	}

	finish()
	if err := st.Release(ctx, held.Key, held.Token); err != nil {
		t.Fatalf("Release after the move: %v", err)
	}
	if _, err := st.Acquire(ctx, fresh); err != nil {
		t.Fatalf("new lock after the move: %v", err)
	}
	again, err := st.Acquire(ctx, store.Lease{Key: held.Key, Token: "next", TTL: time.Second})
	if err != nil {
		t.Fatalf("the released lock after the move: %v", err)
	}
	if again.Fence <= high {
		t.Fatalf("fence after the move is %d, want above %d: the counter did not move with the lock", again.Fence, high)
	}
}

// WithReplicaAcks on a Cluster sends the acquire and WAIT to the key's own
// master (a wrong node would answer MOVED): with no replicas in this cluster
// the lock is refused as unreplicated, on every master.
func TestClusterReplicaAcks(t *testing.T) {
	cc := redistest.StartCluster(t, 3).Client(t)
	l := newLocker(redisstore.New(cc).WithReplicaAcks(1, 5*time.Millisecond))
	ctx := ctxT(t, 10*time.Second)
	for i := range 10 {
		if _, err := l.TryObtain(ctx, fmt.Sprintf("k%d", i)); !errors.Is(err, redisstore.ErrNotReplicated) {
			t.Fatalf("TryObtain: %v, want ErrNotReplicated", err)
		}
	}
}

// WithReplicaAcks on a Cluster follows a slot that has moved (MOVED) or is
// moving (ASK): the acquire and its WAIT reach the node that owns the key,
// which, with no replicas in this cluster, refuses the lock as unreplicated
// and keeps nothing. A MOVED or ASK error would mean the pipeline went to
// the wrong node.
func TestClusterReplicaAcksFollowsRedirects(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	cc := cl.Client(t)
	s := redisstore.New(cc).WithReplicaAcks(1, 5*time.Millisecond)
	ctx := ctxT(t, 20*time.Second)
	refused := func(phase, key string) {
		t.Helper()
		_, err := s.Acquire(ctx, store.Lease{Key: key, Token: "tok-" + phase, TTL: 10 * time.Second})
		// While the slot moves, the importing node takes a two-key script
		// only after ASKING, and then only once both keys are there: for a
		// new lock it answers TRYAGAIN (without ASKING it would answer MOVED).
		want := redisstore.ErrNotReplicated
		if strings.HasPrefix(phase, "moving") {
			if err == nil || !strings.HasPrefix(err.Error(), "TRYAGAIN") {
				t.Fatalf("%s: Acquire: %v, want TRYAGAIN from the importing node", phase, err)
			}
		} else if !errors.Is(err, want) {
			t.Fatalf("%s: Acquire: %v, want %v", phase, err, want)
		}
		for _, srv := range cl.Servers {
			if keys, err := srv.Client(t).Keys(ctx, key).Result(); err != nil || len(keys) != 0 {
				t.Fatalf("%s: %s keeps %v (%v)", phase, srv.Addr, keys, err)
			}
		}
	}
	// answered counts the error replies the servers sent since the last
	// call, by kind, so that each phase is seen to take the path it is about.
	answered := func() map[string]int {
		t.Helper()
		counts := map[string]int{}
		for _, srv := range cl.Servers {
			c := srv.Client(t)
			stats, err := c.Info(ctx, "errorstats").Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Fields(stats) {
				var kind string
				var n int
				if k, count, ok := strings.Cut(strings.TrimPrefix(line, "errorstat_"), ":count="); ok {
					if _, err := fmt.Sscan(count, &n); err == nil {
						kind = k
					}
				}
				counts[kind] += n
			}
			if err := c.ConfigResetStat(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
		return counts
	}
	followed := func(phase string, want map[string]int) {
		t.Helper()
		got := answered()
		for _, kind := range []string{"MOVED", "ASK"} {
			if got[kind] != want[kind] {
				t.Fatalf("%s: %d %s replies, want %d, the ones the acquire followed", phase, got[kind], kind, want[kind])
			}
		}
	}

	refused("settled", "a:{acks}") // the client learns the slot map
	slot, owner := cl.KeyOwner(t, "{acks}")
	next := cl.Others(owner)[0]
	cl.MoveSlot(t, slot, next)
	answered()
	refused("moved", "a:{acks}")
	followed("moved", map[string]int{"MOVED": 1})

	// Keys the migrating owner does not have (lock and fence alike) get ASK.
	last := cl.Others(next)[1]
	finish := cl.BeginMove(t, slot, last)
	answered()
	refused("moving", "b:{acks}")
	followed("moving", map[string]int{"ASK": 1})
	finish()
	answered()
	refused("moved again", "c:{acks}") // a node the store has met before
	followed("moved again", map[string]int{"MOVED": 1})

	// A slot map two moves behind: the node the client knows, now importing
	// the slot, answers MOVED, and the owner it names, migrating the slot
	// back, answers ASK.
	cl.MoveSlot(t, slot, cl.Others(last)[0])
	finish = cl.BeginMove(t, slot, last)
	answered()
	refused("moving, two moves behind", "d:{acks}")
	followed("moving, two moves behind", map[string]int{"MOVED": 1, "ASK": 1})
	finish()
}
