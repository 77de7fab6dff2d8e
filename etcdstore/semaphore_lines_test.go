package etcdstore_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/etcdstore"
	"github.com/reqlock/reqlock/internal/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// The permit line wakes whoever is next without anyone asking again: a
// waiter that leaves wakes the one behind it (which watched it), and a
// release wakes the head (which watches the permits).
func TestPermitLineWakesOnLeaveAndRelease(t *testing.T) {
	st, _ := newStore(t)
	ctx := ctxFor(t, 30*time.Second)
	const key = "plw/{k}"
	ttl := 10 * time.Second
	woken := make(chan string, 16)
	done, err := st.SubscribePermits("plw/", "i1", func(_, waiter string) { woken <- waiter }).Hold(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	if _, err := st.AcquirePermit(ctx, store.Lease{Key: key, Token: "holder", TTL: ttl}, 1); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"i1/a", "i1/b", "i1/c"} {
		if _, err := st.AcquirePermitQueued(ctx, store.Lease{Key: key, Token: w + "-0", TTL: ttl}, 1, w); !errors.Is(err, store.ErrNotObtained) {
			t.Fatalf("%s joins the line: %v", w, err)
		}
	}
	expect := func(want, why string) {
		t.Helper()
		select {
		case got := <-woken:
			if got != want {
				t.Fatalf("%s woke %s, want %s", why, got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s woke nobody, want %s", why, want)
		}
	}
	if err := st.LeavePermitLine(ctx, key, "i1/b"); err != nil {
		t.Fatal(err)
	}
	expect("i1/c", "b leaving")
	// c asks again, and now watches a.
	if _, err := st.AcquirePermitQueued(ctx, store.Lease{Key: key, Token: "i1/c-1", TTL: ttl}, 1, "i1/c"); !errors.Is(err, store.ErrNotObtained) {
		t.Fatalf("c asks again: %v", err)
	}
	if err := st.ReleasePermit(ctx, key, "holder"); err != nil {
		t.Fatal(err)
	}
	expect("i1/a", "the release")
	if _, err := st.AcquirePermitQueued(ctx, store.Lease{Key: key, Token: "i1/a-1", TTL: ttl}, 1, "i1/a"); err != nil {
		t.Fatalf("a, woken: %v", err)
	}
	expect("i1/c", "a admitted")
}

// A waiter cut off from etcd for longer than its line lease loses its
// place: the one behind it is woken, and once the waiter is back it
// stands behind, not ahead of it.
func TestPermitWaiterCutOffLosesItsPlace(t *testing.T) {
	c := etcdtest.Start(t)
	cli := c.Client(t)
	direct := etcdstore.New(cli)
	p := faultproxy.Start(t, c.Members[0].DirectEndpoint())
	cut := etcdstore.New(etcdtest.NewClient(t, p.Addr()))
	ctx := ctxFor(t, time.Minute)
	const key = "pcut/{k}"
	ttl := 10 * time.Second
	woken := make(chan string, 16)
	for _, h := range []struct {
		s        *etcdstore.Store
		instance string
	}{{cut, "i1"}, {direct, "i2"}} {
		done, err := h.s.SubscribePermits("pcut/", h.instance, func(_, w string) { woken <- w }).Hold(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer done()
	}
	if _, err := direct.AcquirePermit(ctx, store.Lease{Key: key, Token: "holder", TTL: ttl}, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := cut.AcquirePermitQueued(ctx, store.Lease{Key: key, Token: "a0", TTL: ttl}, 1, "i1/a"); !errors.Is(err, store.ErrNotObtained) {
		t.Fatalf("a joins: %v", err)
	}
	if _, err := direct.AcquirePermitQueued(ctx, store.Lease{Key: key, Token: "b0", TTL: ttl}, 1, "i2/b"); !errors.Is(err, store.ErrNotObtained) {
		t.Fatalf("b joins: %v", err)
	}
	p.Drop(faultproxy.Upstream)
	p.Drop(faultproxy.Downstream)
	deadline := time.After(20 * time.Second)
	for b := false; !b; {
		select {
		case w := <-woken:
			b = w == "i2/b"
		case <-deadline:
			t.Fatal("b was not woken when a's line lease ran out")
		}
	}
	if _, err := direct.AcquirePermitQueued(ctx, store.Lease{Key: key, Token: "b1", TTL: ttl}, 1, "i2/b"); !errors.Is(err, store.ErrNotObtained) {
		t.Fatalf("b asks again: %v", err)
	}
	p.Heal()
	for {
		_, err := cut.AcquirePermitQueued(ctx, store.Lease{Key: key, Token: "a1", TTL: ttl}, 1, "i1/a")
		if errors.Is(err, store.ErrNotObtained) {
			break
		}
		if err == nil || ctx.Err() != nil {
			t.Fatalf("a asks again: %v", err)
		}
		time.Sleep(100 * time.Millisecond) // the client reconnects
	}
	r, err := cli.Get(ctx, key+"/permit-line/", clientv3.WithPrefix(), clientv3.WithKeysOnly(),
		clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
	if err != nil {
		t.Fatal(err)
	}
	var line []string
	for _, kv := range r.Kvs {
		line = append(line, strings.TrimPrefix(string(kv.Key), key+"/permit-line/"))
	}
	if len(line) != 2 || line[0] != "i2/b" || line[1] != "i1/a" {
		t.Fatalf("line %v, want [i2/b i1/a]", line)
	}
}
