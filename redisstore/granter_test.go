package redisstore_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/lockertest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// lineCalls counts, in n, the scripts a client sends that name a key's line:
// the acquires of a waiter, and releases (not renewals).
func lineCalls(n *atomic.Int64) redistest.CommandHook {
	return redistest.CommandHook{Sent: func(cmd redis.Cmder) {
		for _, a := range cmd.Args() {
			if k, ok := a.(string); ok && strings.HasSuffix(k, ":q") {
				n.Add(1)
			}
		}
	}}
}

// On Redis, through Sentinel and on Cluster a release hands the lock to the
// head of the line with its fence, and the waiter runs on being told: no
// acquire after the release. The lock it holds is renewed to a whole lease, shows in Inspect
// under the waiter's label, and its release hands it on to the next in
// line.
func TestHandOverRunsWithoutAnAcquire(t *testing.T) {
	t.Run("redis", func(t *testing.T) {
		srv := redistest.Start(t)
		handOverRuns(t, func() redis.UniversalClient { return srv.Client(t) }, plainRedis)
	})
	// A store from outside the package that embeds redisstore.Store gets the
	// hand-off through the exported contract (Granter) alone.
	t.Run("redis-embedded", func(t *testing.T) {
		srv := redistest.Start(t)
		handOverRuns(t, func() redis.UniversalClient { return srv.Client(t) }, func(c redis.UniversalClient) core.Store {
			return embeddingRedisStore{redisstore.New(c)}
		})
	})
	t.Run("cluster", func(t *testing.T) {
		cl := redistest.StartCluster(t, 3)
		handOverRuns(t, func() redis.UniversalClient { return cl.Client(t) }, plainRedis)
	})
	t.Run("sentinel", func(t *testing.T) {
		sn := redistest.StartSentinel(t)
		handOverRuns(t, func() redis.UniversalClient { return sn.Client(t) }, plainRedis)
	})
}

// embeddingRedisStore is how a user adds to the Redis store: every method
// is the embedded one's.
type embeddingRedisStore struct{ *redisstore.Store }

func plainRedis(c redis.UniversalClient) core.Store { return redisstore.New(c) }

// handOverRuns is TestHandOverRunsWithoutAnAcquire over the clients that
// newClient opens, one per instance, and the stores newStore makes of them.
func handOverRuns(t *testing.T, newClient func() redis.UniversalClient, newStore func(redis.UniversalClient) core.Store) {
	ctx := ctxT(t, 20*time.Second)
	const ttl = 3 * time.Second
	holder := newLocker(newStore(newClient()), core.WithTTL(ttl))
	bClient := newClient()
	var bCalls atomic.Int64
	redistest.AddCommandHook(t, ctx, bClient, lineCalls(&bCalls))
	b := newLocker(newStore(bClient), core.WithTTL(ttl), core.WithHolder("pod-b"))
	c := newLocker(newStore(newClient()), core.WithTTL(ttl))
	skey, _ := holder.StoreKey("k")
	observer := newClient()

	first, err := holder.Obtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	bGot := lockertest.ObtainAsync(ctx, b, "k")
	lockertest.WaitFor(t, "b to stand in line", func() bool { return observer.LLen(ctx, skey+":q").Val() == 1 })
	cGot := lockertest.ObtainAsync(ctx, c, "k")
	lockertest.WaitFor(t, "c to stand in line behind b", func() bool { return observer.LLen(ctx, skey+":q").Val() == 2 })

	before := bCalls.Load()
	if before == 0 {
		t.Fatal("b's acquire that joined the line was not counted: the count below would prove nothing")
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	got := <-bGot
	if got.Err != nil {
		t.Fatal(got.Err)
	}
	lk := got.Lock
	if n := bCalls.Load() - before; n != 0 {
		t.Fatalf("b sent %d acquires between the release and holding the lock, want 0", n)
	}
	if !strings.HasPrefix(lk.Token(), "~") || lk.Fence() <= first.Fence() {
		t.Fatalf("token %q fence %d after fence %d: want a handed-over lock with a larger fence", lk.Token(), lk.Fence(), first.Fence())
	}
	h, err := b.Inspect(ctx, "k")
	if err != nil || !h.Held || !h.HandedOff || h.Holder != "pod-b" || h.Fence != lk.Fence() {
		t.Fatalf("inspect: %+v, %v", h, err)
	}

	// Held past the hand-off's own lease: the watchdog renewed it.
	time.Sleep(3 * store.HandOffTimeout)
	select {
	case <-lk.Lost():
		t.Fatal("the handed-over lock was lost")
	default:
	}
	if left, err := lk.TTL(ctx); err != nil || left <= store.HandOffTimeout {
		t.Fatalf("lease %v, %v: want renewed to about %v", left, err, ttl)
	}
	select {
	case o := <-cGot:
		t.Fatalf("c obtained while b holds: %v", o.Err)
	default:
	}

	if err := lk.Release(ctx); err != nil {
		t.Fatal(err)
	}
	next := <-cGot
	if next.Err != nil {
		t.Fatal(next.Err)
	}
	if next.Lock.Fence() <= lk.Fence() {
		t.Fatalf("c's fence %d after b's %d", next.Lock.Fence(), lk.Fence())
	}
	if err := next.Lock.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if n := observer.Exists(ctx, skey).Val(); n != 0 {
		t.Fatal("the key is still taken after every release")
	}
}
