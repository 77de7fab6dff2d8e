package core_test

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
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore"
	"github.com/reqlock/reqlock/redisstore/redlock"
)

// inspectCase is a store for the Inspect tests, with the servers behind it
// (none for memory), to count their writes.
type inspectCase struct {
	name string
	open func(t *testing.T) (core.Store, []redis.UniversalClient)
	// fenceKept: the store still reports the last fence once the key is free.
	fenceKept bool
}

var inspectCases = []inspectCase{
	{"memory", func(t *testing.T) (core.Store, []redis.UniversalClient) {
		return memorystore.New(), nil
	}, false},
	{"redis", func(t *testing.T) (core.Store, []redis.UniversalClient) {
		c := redistest.Start(t).Client(t)
		return redisstore.New(c), []redis.UniversalClient{c}
	}, true},
	{"cluster", func(t *testing.T) (core.Store, []redis.UniversalClient) {
		cl := redistest.StartCluster(t, 3)
		var masters []redis.UniversalClient
		for _, s := range cl.Servers {
			masters = append(masters, s.Client(t))
		}
		return redisstore.New(cl.Client(t)), masters
	}, true},
	{"redlock", func(t *testing.T) (core.Store, []redis.UniversalClient) {
		_, clients := startRedlock(t, 5)
		return redlock.New(clients...).WithNodeTimeout(time.Second), clients
	}, true},
}

func forEachInspectStore(t *testing.T, f func(t *testing.T, s core.Store, servers []redis.UniversalClient, fenceKept bool)) {
	for _, ic := range inspectCases {
		t.Run(ic.name, func(t *testing.T) {
			s, servers := ic.open(t)
			f(t, s, servers, ic.fenceKept)
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

func mustInspect(t *testing.T, ctx context.Context, l *core.Locker, key string) core.Holding {
	t.Helper()
	h, err := l.Inspect(ctx, key)
	if err != nil {
		t.Fatalf("Inspect(%q): %v", key, err)
	}
	return h
}

// A free key, a held one, a waiter in line, the hand-over to the waiter and
// the release: what Inspect says at each step, on every store.
func TestInspectLifecycle(t *testing.T) {
	forEachInspectStore(t, func(t *testing.T, s core.Store, servers []redis.UniversalClient, fenceKept bool) {
		ctx := ctxT(t, 30*time.Second)
		const ttl = 2 * time.Second
		a := newLocker(s, core.WithTTL(ttl), core.WithHolder("pod-a"))
		b := newLocker(s, core.WithTTL(ttl), core.WithHolder("pod-b"))

		skey, _ := a.StoreKey("order:1")
		if h := mustInspect(t, ctx, a, "order:1"); h != (core.Holding{StoreKey: skey}) {
			t.Fatalf("free key: %+v", h)
		}

		lk, err := a.TryObtain(ctx, "order:1")
		if err != nil {
			t.Fatal(err)
		}
		h := mustInspect(t, ctx, b, "order:1")
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
		waitFor(t, "a waiter in line", func() bool {
			return mustInspect(t, ctx, a, "order:1").Waiting == 1
		})

		if err := lk.Release(ctx); err != nil {
			t.Fatal(err)
		}
		blk := <-got
		if blk == nil {
			t.FailNow()
		}
		h = mustInspect(t, ctx, a, "order:1")
		if !h.Held || h.Holder != "pod-b" || h.Fence != blk.Fence() || h.Waiting != 0 {
			t.Fatalf("after the hand-over: %+v, want held by pod-b with fence %d and nobody waiting", h, blk.Fence())
		}

		if err := blk.Release(ctx); err != nil {
			t.Fatal(err)
		}
		h = mustInspect(t, ctx, a, "order:1")
		want := core.Holding{StoreKey: skey}
		if fenceKept {
			want.Fence = blk.Fence()
		}
		if h != want {
			t.Fatalf("after release: %+v, want %+v", h, want)
		}
	})
}

// Inspect writes nothing: not on a key never used, not on a held key (whose
// lease it does not extend: the holder has no watchdog here), and not while
// Lockers race for the key between two inspections.
func TestInspectIsReadOnly(t *testing.T) {
	forEachInspectStore(t, func(t *testing.T, s core.Store, servers []redis.UniversalClient, _ bool) {
		ctx := ctxT(t, 30*time.Second)
		const ttl = 5 * time.Second
		l := newLocker(s, core.WithTTL(ttl), core.WithoutWatchdog(), core.WithHolder("pod-a"))

		keys, before := keyCount(t, servers), writes(t, servers)
		for range 3 {
			if h := mustInspect(t, ctx, l, "never-used"); h.Held || h.Fence != 0 {
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
		first := mustInspect(t, ctx, l, "k")
		keys, before = keyCount(t, servers), writes(t, servers)
		var last core.Holding
		for range 20 {
			last = mustInspect(t, ctx, l, "k")
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
			racers[i] = newLocker(s, core.WithTTL(ttl), core.WithoutWatchdog(), core.WithHolder("racer-"+strconv.Itoa(i)))
		}
		pre := mustInspect(t, ctx, l, "race")
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
		post := mustInspect(t, ctx, l, "race")
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

// A Locker without WithHolder stores the bare token: Holder is "".
func TestInspectWithoutHolder(t *testing.T) {
	s := redisstore.New(redistest.Start(t).Client(t))
	ctx := ctxT(t, 10*time.Second)
	l := newLocker(s)
	lk, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release(ctx)
	if strings.Contains(lk.Token(), ".") {
		t.Fatalf("token %q carries a label", lk.Token())
	}
	if h := mustInspect(t, ctx, l, "k"); !h.Held || h.Holder != "" {
		t.Fatalf("%+v", h)
	}
}

// The holder's token never comes out of Inspect: only the label after it.
func TestInspectHidesToken(t *testing.T) {
	c := redistest.Start(t).Client(t)
	ctx := ctxT(t, 10*time.Second)
	l := newLocker(redisstore.New(c), core.WithHolder("web.eu-1"))
	lk, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release(ctx)
	skey, _ := l.StoreKey("k")
	stored := c.Get(ctx, skey).Val()
	token, label, _ := strings.Cut(stored, ".")
	if stored != lk.Token() || label != "web.eu-1" {
		t.Fatalf("stored %q, Lock.Token %q", stored, lk.Token())
	}
	h := mustInspect(t, ctx, l, "k")
	if h.Holder != "web.eu-1" || strings.Contains(h.Holder, token) {
		t.Fatalf("%+v", h)
	}
}

// A lock a release handed to the next waiter, not claimed yet, is held by
// nobody in particular.
func TestInspectHandedOff(t *testing.T) {
	c := redistest.Start(t).Client(t)
	ctx := ctxT(t, 10*time.Second)
	l := newLocker(redisstore.New(c))
	skey, _ := l.StoreKey("k")
	if err := c.Set(ctx, skey, "~instance/waiter", time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	h := mustInspect(t, ctx, l, "k")
	if !h.Held || !h.HandedOff || h.Holder != "" || h.Lease <= 0 {
		t.Fatalf("%+v", h)
	}
}

// Redlock: held only where a quorum agrees on one holder; a minority copy
// (a failed acquire not yet taken back) leaves the key free; too few
// answers to tell is a store failure.
func TestInspectRedlockQuorumRule(t *testing.T) {
	servers, clients := startRedlock(t, 5)
	s := redlock.New(clients...).WithNodeTimeout(time.Second)
	ctx := ctxT(t, 30*time.Second)
	l := newLocker(s, core.WithHolder("pod-a"))
	skey, _ := l.StoreKey("k")

	// Two nodes hold a stray copy: no quorum.
	for _, c := range clients[:2] {
		c.Set(ctx, skey, "stray.pod-x", 5*time.Second)
	}
	if h := mustInspect(t, ctx, l, "k"); h.Held {
		t.Fatalf("two of five copies: %+v", h)
	}
	// With one node down the two copies plus it could still be a quorum.
	servers[4].Kill()
	if _, err := l.Inspect(ctx, "k"); !errors.Is(err, core.ErrUnavailable) {
		t.Fatalf("two copies, one node down: %v, want ErrUnavailable", err)
	}
	// Three copies, one down: held, lease the quorum-th longest.
	clients[2].Set(ctx, skey, "stray.pod-x", 3*time.Second)
	h := mustInspect(t, ctx, l, "k")
	if !h.Held || h.Holder != "pod-x" || h.Lease > 3*time.Second || h.Lease < 2*time.Second {
		t.Fatalf("three of five copies: %+v", h)
	}
}

// A store that does not implement Inspector says so.
func TestInspectUnsupportedStore(t *testing.T) {
	l := newLocker(struct{ core.Store }{memorystore.New()})
	h, err := l.Inspect(context.Background(), "k")
	if !errors.Is(err, core.ErrNoInspect) {
		t.Fatalf("%v, want ErrNoInspect", err)
	}
	if skey, _ := l.StoreKey("k"); h.StoreKey != skey {
		t.Fatalf("StoreKey %q, want %q", h.StoreKey, skey)
	}
	if _, err := l.Inspect(context.Background(), ""); !errors.Is(err, core.ErrEmptyKey) {
		t.Fatalf("empty key: %v", err)
	}
}

// A Redis that is down is ErrUnavailable, fast, with the store key.
func TestInspectStoreDown(t *testing.T) {
	srv := redistest.Start(t)
	l := newLocker(redisstore.New(srv.Client(t)))
	srv.Kill()
	ctx := ctxT(t, 5*time.Second)
	h, err := l.Inspect(ctx, "k")
	if !errors.Is(err, core.ErrUnavailable) || h.StoreKey == "" {
		t.Fatalf("%+v, %v: want ErrUnavailable and the store key", h, err)
	}
}

func TestWithHolderValidatesLabel(t *testing.T) {
	for _, bad := range []string{"", strings.Repeat("a", 65), "pod 1", "pod{1", "pod}1", "tab\t", "nul\x00", "é", "del\x7f"} {
		func() {
			defer func() {
				r := recover()
				if msg, _ := r.(string); !strings.Contains(msg, "WithHolder") {
					t.Errorf("WithHolder(%q): recovered %v, want a panic that names WithHolder", bad, r)
				}
			}()
			core.WithHolder(bad)
		}()
	}
	for _, good := range []string{"a", "pod-1", "web.eu-1", "host:8080/x~y", strings.Repeat("z", 64)} {
		core.WithHolder(good)
	}
}
