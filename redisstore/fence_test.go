package redisstore_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// Without persistence a restart forgets every counter; the fence must still
// go up.
func TestRedisFenceSurvivesRestart(t *testing.T) {
	srv := redistest.Start(t)
	l := newLocker(redisstore.New(srv.Client(t)))
	ctx := ctxT(t, 10*time.Second)
	first, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	srv.Restart()
	var second *core.Lock
	for range 50 { // the client reconnects on its own; give it a moment
		if second, err = l.TryObtain(ctx, "k"); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer second.Release(ctx)
	if second.Fence() <= first.Fence() {
		t.Fatalf("fence went from %d to %d across a restart", first.Fence(), second.Fence())
	}
}

// The fence counter expires with the lock's key; a later holder still gets a
// larger fence, so counters for one-off keys need not be kept forever.
func TestRedisFenceSurvivesExpiredCounter(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	l := newLocker(redisstore.New(c))
	ctx := ctxT(t, 10*time.Second)
	first, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	first.Release(ctx)
	skey, _ := l.StoreKey("k")
	if ttl := c.PTTL(ctx, skey+":fence").Val(); ttl <= 0 {
		t.Fatalf("fence counter has no expiry (PTTL %v): it would pile up", ttl)
	}
	c.Del(ctx, skey+":fence")
	second, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer second.Release(ctx)
	if second.Fence() <= first.Fence() {
		t.Fatalf("fence went from %d to %d after the counter expired", first.Fence(), second.Fence())
	}
}

// Redis with RDB snapshots (the stock configuration) restarts with the fence
// counter as of its last snapshot: the fence must still go up.
func TestRedisFenceSurvivesSnapshotRestart(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	l := newLocker(redisstore.New(c))
	ctx := ctxT(t, 10*time.Second)
	take := func(l *core.Locker) uint64 {
		var lk *core.Lock
		var err error
		for range 50 { // after the restart the client reconnects on its own
			if lk, err = l.TryObtain(ctx, "k"); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := lk.Release(ctx); err != nil {
			t.Fatal(err)
		}
		return lk.Fence()
	}
	take(l)
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	var last uint64
	for range 5 {
		last = take(l)
	}
	srv.Restart() // a crash; the restart loads the older dump.rdb
	if after := take(l); after <= last {
		t.Fatalf("fence went from %d before the crash to %d after", last, after)
	}
}

// Fences are exact integers past 2^53, where Lua's numbers are not.
func TestRedisFenceExactPast2To53(t *testing.T) {
	c := redistest.Start(t).Client(t)
	st := redisstore.New(c)
	ctx := ctxT(t, 10*time.Second)
	key := "reqlock:{big-fence}"
	const high = 1<<53 + 1 // the first integer a double cannot hold
	if err := c.Set(ctx, key+":fence", uint64(high), 0).Err(); err != nil {
		t.Fatal(err)
	}
	for i, want := range []uint64{high + 1, high + 2} {
		g, err := st.Acquire(ctx, store.Lease{Key: key, Token: fmt.Sprint("t", i), TTL: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if g.Fence != want {
			t.Fatalf("fence %d, want %d", g.Fence, want)
		}
		if err := st.Release(ctx, key, fmt.Sprint("t", i)); err != nil {
			t.Fatal(err)
		}
	}
	// A counter with no successor in 19 digits refuses, and takes nothing.
	if err := c.Set(ctx, key+":fence", "9999999999999999999", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Acquire(ctx, store.Lease{Key: key, Token: "last", TTL: time.Second}); err == nil || !strings.Contains(err.Error(), "exhausted") {
		t.Fatalf("acquire past the last fence: %v, want an error", err)
	}
	if n := c.Exists(ctx, key).Val(); n != 0 {
		t.Fatal("a refused acquire kept the lock")
	}
}
