package redisstore_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/lockertest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// inspectStores are one server and a Cluster, with the servers whose
// writes the Inspect checks count.
var inspectStores = []lockertest.InspectStore{
	{Name: "redis", FenceKept: true, Open: func(t *testing.T) (core.Store, []redis.UniversalClient) {
		c := redistest.Start(t).Client(t)
		return redisstore.New(c), []redis.UniversalClient{c}
	}},
	{Name: "cluster", FenceKept: true, Open: func(t *testing.T) (core.Store, []redis.UniversalClient) {
		cl := redistest.StartCluster(t, 3)
		var masters []redis.UniversalClient
		for _, s := range cl.Servers {
			masters = append(masters, s.Client(t))
		}
		return redisstore.New(cl.Client(t)), masters
	}},
}

// A free key, a held one, a waiter in line, the hand-over to the waiter and
// the release: what Inspect says at each step.
func TestInspectLifecycle(t *testing.T) { lockertest.InspectLifecycle(t, inspectStores...) }

// Inspect writes nothing, on any master.
func TestInspectIsReadOnly(t *testing.T) { lockertest.InspectIsReadOnly(t, inspectStores...) }

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
	if h := lockertest.MustInspect(t, ctx, l, "k"); !h.Held || h.Holder != "" {
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
	h := lockertest.MustInspect(t, ctx, l, "k")
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
	h := lockertest.MustInspect(t, ctx, l, "k")
	if !h.Held || !h.HandedOff || h.Holder != "" || h.Lease <= 0 {
		t.Fatalf("%+v", h)
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
