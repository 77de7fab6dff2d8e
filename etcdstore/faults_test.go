package etcdstore_test

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/etcdstore"
	"github.com/reqlock/reqlock/internal/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Hostile and huge keys never reach etcd: core hashes them, and every key
// the store writes is derived from the hash.
func TestHostileKeysAreHashed(t *testing.T) {
	s, cli := newStore(t)
	l := core.NewLocker(s, core.WithTTL(2*time.Second))
	ctx := ctxFor(t, 20*time.Second)
	hostile := []string{
		"../../etc/passwd",
		"a\x00b\r\nSET x y",
		"}{" + strings.Repeat("{", 100),
		strings.Repeat("k", 1<<20), // over etcd's request limit if written raw
		"/line/x/record",
	}
	for _, k := range hostile {
		lk, rec, err := l.TryObtainOrRecord(ctx, k)
		if err != nil || rec != nil {
			t.Fatalf("key of %d bytes: %v", len(k), err)
		}
		if err := lk.ReleaseRecording(ctx, []byte("r"), time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	r, err := cli.Get(ctx, "\x00", clientv3.WithFromKey(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	ok := regexp.MustCompile(`^reqlock:\{[A-Za-z0-9_-]{22}\}(/record|/cancel/[0-9a-f]{24}|/line/.*)?$`)
	for _, kv := range r.Kvs {
		if !ok.Match(kv.Key) {
			t.Fatalf("a key not derived from a hash: %q", kv.Key)
		}
		for _, k := range hostile {
			if bytes.Contains(kv.Key, []byte(k[:min(len(k), 16)])) {
				t.Fatalf("raw key text in %q", kv.Key)
			}
		}
	}
}

// With a majority of members down, calls fail in bounded time with
// ErrUnavailable, a held lock is declared lost by its own clock, and once
// the members are back the same store works again by itself.
func TestMajorityLostBoundedErrors(t *testing.T) {
	c := etcdtest.StartCluster(t, 3)
	s := etcdstore.New(c.Client(t))
	l := core.NewLocker(s, core.WithTTL(2*time.Second), core.WithAttemptTimeout(time.Second))
	ctx := ctxFor(t, 60*time.Second)
	held := mustObtain(t, l, "held")
	c.Members[1].Kill()
	c.Members[2].Kill()
	select {
	case <-held.Lost():
	case <-time.After(3 * time.Second): // its 2s lease, by its own clock
		t.Fatal("a lock that cannot be renewed was not declared lost")
	}
	for range 3 {
		start := time.Now()
		_, err := l.TryObtain(ctx, "other")
		if !errors.Is(err, core.ErrUnavailable) {
			t.Fatalf("TryObtain without a majority: %v, want ErrUnavailable", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Fatalf("TryObtain without a majority took %v", d)
		}
	}
	c.Members[1].Restart(t)
	c.Members[2].Restart(t)
	eventually(t, 30*time.Second, "the store to work again", func() bool {
		lk, err := l.TryObtain(ctx, "other")
		if err != nil {
			return false
		}
		_ = lk.Release(ctx)
		return true
	})
}

// A holder cut off past its lease (its link held, as a paused process's
// is) learns of the loss by its own clock; another takes the key with a
// greater fence; the first holder's Guard-ed write, sent once it is back,
// does not commit.
func TestHolderPausedPastLeaseGuardFails(t *testing.T) {
	c := etcdtest.Start(t)
	p := faultproxy.Start(t, c.Members[0].DirectEndpoint())
	slowCli := etcdtest.NewClient(t, p.Addr())
	slow := etcdstore.New(slowCli)
	holder := core.NewLocker(slow, core.WithTTL(2*time.Second))
	other := core.NewLocker(etcdstore.New(c.Client(t)), core.WithTTL(2*time.Second))
	ctx := ctxFor(t, 30*time.Second)
	lk := mustObtain(t, holder, "acct")
	p.Hold(faultproxy.Upstream)
	select {
	case <-lk.Lost():
	case <-time.After(3 * time.Second):
		t.Fatal("the cut-off holder did not learn of the loss")
	}
	next := mustObtain(t, other, "acct")
	defer next.Release(ctx)
	if next.Fence() <= lk.Fence() {
		t.Fatalf("fence %d after %d", next.Fence(), lk.Fence())
	}
	p.Heal()
	eventually(t, 10*time.Second, "the holder's guarded write to be answered", func() bool {
		wctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		r, err := slowCli.Txn(wctx).If(slow.Guard(lk)).Then(clientv3.OpPut("balance", "stale")).Commit()
		if err != nil {
			return false
		}
		if r.Succeeded {
			t.Fatal("the stale holder's guarded write committed")
		}
		return true
	})
	// Guard keeps refusing even if the store still knew the lock: the
	// comparison is on the key's create revision.
	r, err := slowCli.Get(ctx, "balance")
	if err != nil || len(r.Kvs) != 0 {
		t.Fatalf("balance: %v %v", r.Kvs, err)
	}
}

// Killing the leader while a lock is held and another waits for it loses
// nothing: the holder keeps its lock (its renewals go to the new leader),
// and the waiter is served when it is released.
func TestLeaderKilledNothingLost(t *testing.T) {
	c := etcdtest.StartCluster(t, 3)
	holder := core.NewLocker(etcdstore.New(c.Client(t)), core.WithTTL(5*time.Second))
	waiter := core.NewLocker(etcdstore.New(c.Client(t)), core.WithTTL(5*time.Second))
	ctx := ctxFor(t, 60*time.Second)
	lk := mustObtain(t, holder, "k")
	got := make(chan *core.Lock, 1)
	go func() {
		w, err := waiter.Obtain(ctx, "k")
		if err != nil {
			t.Error(err)
		}
		got <- w
	}()
	eventually(t, 10*time.Second, "the waiter in line", func() bool {
		h, err := holder.Inspect(ctx, "k")
		return err == nil && h.Waiting == 1
	})
	c.Leader(t).Kill()
	select {
	case <-lk.Lost():
		t.Fatal("the holder lost its lock when the leader was killed")
	case <-time.After(6 * time.Second): // more than its lease
	}
	if err := releaseRetrying(ctx, lk); err != nil {
		t.Fatal(err)
	}
	w := <-got
	if w == nil {
		t.FailNow()
	}
	if w.Fence() <= lk.Fence() {
		t.Fatalf("fence %d after %d", w.Fence(), lk.Fence())
	}
	_ = releaseRetrying(ctx, w)
}

// releaseRetrying releases lk, trying again while etcd is electing.
func releaseRetrying(ctx context.Context, lk *core.Lock) error {
	for {
		err := lk.Release(ctx)
		if err == nil || !errors.Is(err, core.ErrUnavailable) || ctx.Err() != nil {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A holder whose member is partitioned away (through the proxy) cannot
// renew: it learns of the loss before the lease can run out, the other
// side takes the key after it, and the cut-off holder's Guard-ed write
// fails once it is back.
func TestPartitionedMemberHolderLoses(t *testing.T) {
	c := etcdtest.StartCluster(t, 3, etcdtest.WithProxy())
	cut := c.Members[0]
	cutCli := etcdtest.NewClient(t, cut.Endpoint())
	cutStore := etcdstore.New(cutCli)
	holder := core.NewLocker(cutStore, core.WithTTL(2*time.Second))
	other := core.NewLocker(etcdstore.New(etcdtest.NewClient(t, c.Members[1].Endpoint(), c.Members[2].Endpoint())), core.WithTTL(2*time.Second))
	ctx := ctxFor(t, 60*time.Second)
	lk := mustObtain(t, holder, "k")
	cut.Partition()
	lostAt := time.Time{}
	select {
	case <-lk.Lost():
		lostAt = time.Now()
	case <-time.After(4 * time.Second):
		t.Fatal("the partitioned holder did not learn of the loss")
	}
	next := mustObtain(t, other, "k")
	if time.Now().Before(lostAt) {
		t.Fatal("the other side took the key before the holder knew it lost it")
	}
	if next.Fence() <= lk.Fence() {
		t.Fatalf("fence %d after %d", next.Fence(), lk.Fence())
	}
	cut.Heal()
	eventually(t, 20*time.Second, "the healed member to answer", func() bool {
		wctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		r, err := cutCli.Txn(wctx).If(cutStore.Guard(lk)).Then(clientv3.OpPut("x", "stale")).Commit()
		if err != nil {
			return false
		}
		if r.Succeeded {
			t.Fatal("the partitioned holder's guarded write committed")
		}
		return true
	})
	_ = releaseRetrying(ctx, next)
}

// An acquire whose bytes are delayed past its caller's patience lands
// after the caller gave up, and takes nothing: the Locker's cancel follows
// it on the same connection and voids it.
func TestLateLandingAcquireTakesNothing(t *testing.T) {
	c := etcdtest.Start(t)
	p := faultproxy.Start(t, c.Members[0].DirectEndpoint())
	s := etcdstore.New(etcdtest.NewClient(t, p.Addr()))
	l := core.NewLocker(s, core.WithTTL(10*time.Second))
	other := core.NewLocker(etcdstore.New(c.Client(t)), core.WithTTL(10*time.Second))
	ctx := ctxFor(t, 30*time.Second)
	warm := mustObtain(t, l, "warm")
	_ = warm.Release(ctx)
	skey, _ := l.StoreKey("k")
	direct := c.Client(t)
	wch := direct.Watch(ctx, skey)
	p.Delay(faultproxy.Upstream, time.Second)
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if lk, err := l.TryObtain(short, "k"); err == nil {
		_ = lk.Release(ctx)
		t.Fatal("the delayed acquire was answered in time")
	}
	// The acquire lands a second late and takes the key; the cancel,
	// behind it on the same link, deletes it.
	var events []string
	for len(events) < 2 {
		select {
		case r := <-wch:
			for _, ev := range r.Events {
				events = append(events, ev.Type.String())
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("events on the key: %v; want the late PUT and the cancel's DELETE", events)
		}
	}
	if events[0] != "PUT" || events[1] != "DELETE" {
		t.Fatalf("events on the key: %v", events)
	}
	lk, err := other.TryObtain(ctx, "k")
	if err != nil {
		t.Fatalf("after the late acquire and its cancel landed: %v", err)
	}
	_ = lk.Release(ctx)
	p.Heal()
}
