package lockertest

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore/redlock"
)

// InspectStore is a store for the Inspect checks, with the servers behind
// it (none for memory), to count their writes.
type InspectStore struct {
	Name string
	Open func(t *testing.T) (core.Store, []redis.UniversalClient)
	// FenceKept: the store still reports the last fence once the key is
	// free.
	FenceKept bool
}

// MemoryInspect is the memory store, which keeps no fence once a key is
// free.
func MemoryInspect() InspectStore {
	return InspectStore{Name: "memory", Open: func(t *testing.T) (core.Store, []redis.UniversalClient) {
		return memorystore.New(), nil
	}}
}

func eachInspectStore(t *testing.T, stores []InspectStore, f func(t *testing.T, s core.Store, servers []redis.UniversalClient, fenceKept bool)) {
	for _, ic := range stores {
		t.Run(ic.Name, func(t *testing.T) {
			s, servers := ic.Open(t)
			f(t, s, servers, ic.FenceKept)
		})
	}
}

// writes is how many changes the servers have taken since they started
// (INFO's rdb_changes_since_last_save; they never save): a read-only call
// leaves it as it was.
func writes(t *testing.T, servers []redis.UniversalClient) int64 {
	t.Helper()
	var n int64
	for _, c := range servers {
		info, err := c.Info(context.Background(), "persistence").Result()
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(info) {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "rdb_changes_since_last_save:"); ok {
				d, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				n += d
			}
		}
	}
	return n
}

func keyCount(t *testing.T, servers []redis.UniversalClient) int64 {
	t.Helper()
	var n int64
	for _, c := range servers {
		d, err := c.DBSize(context.Background()).Result()
		if err != nil {
			t.Fatal(err)
		}
		n += d
	}
	return n
}

// MustInspect is l.Inspect(ctx, key), which must not fail.
func MustInspect(t *testing.T, ctx context.Context, l *core.Locker, key string) core.Holding {
	t.Helper()
	h, err := l.Inspect(ctx, key)
	if err != nil {
		t.Fatalf("Inspect(%q): %v", key, err)
	}
	return h
}

// InspectLifecycle: a free key, a held one, a waiter in line, the hand-over to the waiter and
// the release: what Inspect says at each step, on every store.
func InspectLifecycle(t *testing.T, stores ...InspectStore) {
	eachInspectStore(t, stores, func(t *testing.T, s core.Store, servers []redis.UniversalClient, fenceKept bool) {
		ctx := Context(t, 30*time.Second)
		const ttl = 2 * time.Second
		a := NewLocker(s, core.WithTTL(ttl), core.WithHolder("pod-a"))
		b := NewLocker(s, core.WithTTL(ttl), core.WithHolder("pod-b"))

		skey, _ := a.StoreKey("order:1")
		if h := MustInspect(t, ctx, a, "order:1"); h != (core.Holding{StoreKey: skey}) {
			t.Fatalf("free key: %+v", h)
		}

		lk, err := a.TryObtain(ctx, "order:1")
		if err != nil {
			t.Fatal(err)
		}
		h := MustInspect(t, ctx, b, "order:1")
		if !h.Held || h.HandedOff || h.Holder != "pod-a" || h.Fence != lk.Fence() ||
			h.Lease <= 0 || h.Lease > ttl || h.Waiting != 0 || h.StoreKey != skey {
			t.Fatalf("held key: %+v, want held by pod-a with fence %d and a lease in (0, %v]", h, lk.Fence(), ttl)
		}

		// b waits in line.
		got := make(chan *core.Lock, 1)
		go func() {
			blk, err := b.Obtain(ctx, "order:1")
			if err != nil {
				t.Error(err)
			}
			got <- blk
		}()
		WaitFor(t, "a waiter in line", func() bool {
			return MustInspect(t, ctx, a, "order:1").Waiting == 1
		})

		if err := lk.Release(ctx); err != nil {
			t.Fatal(err)
		}
		blk := <-got
		if blk == nil {
			t.FailNow()
		}
		h = MustInspect(t, ctx, a, "order:1")
		if !h.Held || h.Holder != "pod-b" || h.Fence != blk.Fence() || h.Waiting != 0 {
			t.Fatalf("after the hand-over: %+v, want held by pod-b with fence %d and nobody waiting", h, blk.Fence())
		}

		if err := blk.Release(ctx); err != nil {
			t.Fatal(err)
		}
		h = MustInspect(t, ctx, a, "order:1")
		want := core.Holding{StoreKey: skey}
		if fenceKept {
			want.Fence = blk.Fence()
		}
		if h != want {
			t.Fatalf("after release: %+v, want %+v", h, want)
		}
	})
}

// InspectIsReadOnly: Inspect writes nothing: not on a key never used, not on a held key (whose
// lease it does not extend: the holder has no watchdog here), and not while
// Lockers race for the key between two inspections.
func InspectIsReadOnly(t *testing.T, stores ...InspectStore) {
	eachInspectStore(t, stores, func(t *testing.T, s core.Store, servers []redis.UniversalClient, _ bool) {
		ctx := Context(t, 30*time.Second)
		const ttl = 5 * time.Second
		l := NewLocker(s, core.WithTTL(ttl), core.WithoutWatchdog(), core.WithHolder("pod-a"))

		keys, before := keyCount(t, servers), writes(t, servers)
		for range 3 {
			if h := MustInspect(t, ctx, l, "never-used"); h.Held || h.Fence != 0 {
				t.Fatalf("unused key: %+v", h)
			}
		}
		if k, w := keyCount(t, servers), writes(t, servers); k != keys || w != before {
			t.Fatalf("inspecting an unused key: %d keys and %d writes, was %d and %d", k, w, keys, before)
		}

		lk, err := l.TryObtain(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		if len(servers) > 0 && writes(t, servers) == before {
			t.Fatal("the write counter missed an acquire: it proves nothing")
		}
		first := MustInspect(t, ctx, l, "k")
		keys, before = keyCount(t, servers), writes(t, servers)
		var last core.Holding
		for range 20 {
			last = MustInspect(t, ctx, l, "k")
		}
		if k, w := keyCount(t, servers), writes(t, servers); k != keys || w != before {
			t.Fatalf("inspecting a held key: %d keys and %d writes, was %d and %d", k, w, keys, before)
		}
		if last.Lease > first.Lease || last.Fence != first.Fence || last.Fence != lk.Fence() {
			t.Fatalf("inspection moved the lock: first %+v, last %+v (fence %d)", first, last, lk.Fence())
		}
		if err := lk.Release(ctx); err != nil {
			t.Fatal(err)
		}

		// A race of TryObtains; Inspect runs throughout and between.
		racers := make([]*core.Locker, 4)
		for i := range racers {
			racers[i] = NewLocker(s, core.WithTTL(ttl), core.WithoutWatchdog(), core.WithHolder("racer-"+strconv.Itoa(i)))
		}
		pre := MustInspect(t, ctx, l, "race")
		var wg sync.WaitGroup
		locks := make(chan *core.Lock, len(racers))
		stop := make(chan struct{})
		seen := make(chan core.Holding, 1000)
		wg.Go(func() {
			for i := 0; i < cap(seen); i++ {
				select {
				case <-stop:
					return
				default:
				}
				h, err := l.Inspect(ctx, "race")
				if err != nil {
					t.Error(err)
					return
				}
				seen <- h
			}
		})
		var racing sync.WaitGroup
		for _, r := range racers {
			racing.Go(func() {
				if lk, err := r.TryObtain(ctx, "race"); err == nil {
					locks <- lk
				} else if !errors.Is(err, core.ErrNotObtained) {
					t.Error(err)
				}
			})
		}
		racing.Wait()
		close(stop)
		wg.Wait()
		close(locks)
		close(seen)
		// Redlock may split the nodes so that nobody wins; other stores
		// always have one winner.
		_, redlock := s.(*redlock.Store)
		if len(locks) > 1 || len(locks) == 0 && !redlock {
			t.Fatalf("%d racers obtained the lock", len(locks))
		}
		won := <-locks
		// Redlock's Fence is the greatest any node handed out, and a loser
		// may have taken (and given back) some nodes after the winner.
		fenceOK := func(h core.Holding) bool {
			return h.Fence == won.Fence() || redlock && h.Fence > won.Fence()
		}
		for h := range seen {
			if h.Held && (won == nil || !fenceOK(h) || !strings.HasPrefix(h.Holder, "racer-") || h.Lease <= 0) {
				t.Fatalf("during the race: %+v, winner %v", h, won)
			}
		}
		keys, before = keyCount(t, servers), writes(t, servers)
		post := MustInspect(t, ctx, l, "race")
		if k, w := keyCount(t, servers), writes(t, servers); k != keys || w != before {
			t.Fatalf("inspecting after the race: %d keys and %d writes, was %d and %d", k, w, keys, before)
		}
		if pre.Held {
			t.Fatalf("before the race: %+v", pre)
		}
		if won == nil {
			if post.Held {
				t.Fatalf("nobody won, yet: %+v", post)
			}
			return
		}
		if !post.Held || !fenceOK(post) || post.Lease > ttl {
			t.Fatalf("after the race %+v, winner's fence %d", post, won.Fence())
		}
		if err := won.Release(ctx); err != nil {
			t.Fatal(err)
		}
	})
}
