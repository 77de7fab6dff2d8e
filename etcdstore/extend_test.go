package etcdstore_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestExtendBatchChecksEachToken(t *testing.T) {
	s, _ := newStore(t)
	ctx := ctxFor(t, 10*time.Second)
	var ls []store.Lease
	for i := range 300 { // more than one transaction's worth
		l := store.Lease{Key: fmt.Sprintf("t:{%d}", i), Token: "tok", TTL: 2 * time.Second}
		if _, err := s.Acquire(ctx, l); err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	ls[7].Token = "wrong"
	ls = append(ls, store.Lease{Key: "t:{none}", Token: "tok", TTL: 2 * time.Second})
	rs := s.Extend(ctx, ls)
	for i, r := range rs {
		bad := i == 7 || i == len(ls)-1
		switch {
		case bad && !errors.Is(r.Err, core.ErrNotHeld):
			t.Fatalf("lease %d: %v, want ErrNotHeld", i, r.Err)
		case !bad && (r.Err != nil || r.Validity <= 0 || r.Validity > 2*time.Second):
			t.Fatalf("lease %d: %+v", i, r)
		}
	}
}

// A refresh to another length moves the lock to that length's lease,
// keeping its fence.
func TestExtendToAnotherLengthKeepsFence(t *testing.T) {
	s, cli := newStore(t)
	ctx := ctxFor(t, 10*time.Second)
	l := store.Lease{Key: "t:{m}", Token: "tok", TTL: 2 * time.Second}
	g, err := s.Acquire(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	l.TTL = 5 * time.Second
	if r := s.Extend(ctx, []store.Lease{l})[0]; r.Err != nil || r.Validity <= 2*time.Second {
		t.Fatalf("extend to 5s: %+v", r)
	}
	r, err := cli.Get(ctx, l.Key)
	if err != nil || uint64(r.Kvs[0].CreateRevision) != g.Fence || string(r.Kvs[0].Value) != "tok" {
		t.Fatalf("after the move: %v %v", r.Kvs, err)
	}
	ttl, err := cli.TimeToLive(ctx, clientv3.LeaseID(r.Kvs[0].Lease))
	if err != nil || ttl.GrantedTTL != 5 {
		t.Fatalf("lease after the move: %+v %v", ttl, err)
	}
}

// A lost lease loses exactly the locks on it: the watchdog's renewal finds
// them gone, and their Lost closes; a lock on another lease stays.
func TestLostLeaseLosesItsLocks(t *testing.T) {
	s, cli := newStore(t)
	short := core.NewLocker(s, core.WithTTL(2*time.Second))
	long := core.NewLocker(s, core.WithTTL(4*time.Second))
	ctx := ctxFor(t, 20*time.Second)
	a, b := mustObtain(t, short, "a"), mustObtain(t, short, "b")
	c := mustObtain(t, long, "c")
	defer c.Release(ctx)
	skey, _ := short.StoreKey("a")
	r, err := cli.Get(ctx, skey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Revoke(ctx, clientv3.LeaseID(r.Kvs[0].Lease)); err != nil {
		t.Fatal(err)
	}
	for _, lk := range []*core.Lock{a, b} {
		select {
		case <-lk.Lost():
		case <-time.After(5 * time.Second):
			t.Fatalf("%s not lost after its lease was revoked", lk.Key())
		}
	}
	select {
	case <-c.Lost():
		t.Fatal("a lock on another lease was lost")
	case <-time.After(3 * time.Second):
	}
	// The store takes a new lease for the next lock.
	d := mustObtain(t, short, "a")
	_ = d.Release(ctx)
}
