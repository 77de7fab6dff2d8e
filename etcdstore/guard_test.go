package etcdstore_test

import (
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestGuardHoldsOnlyWhileLocked(t *testing.T) {
	s, cli := newStore(t)
	l := core.NewLocker(s, core.WithTTL(2*time.Second))
	ctx := ctxFor(t, 10*time.Second)
	lk := mustObtain(t, l, "acct")
	put := func(v string) bool {
		r, err := cli.Txn(ctx).If(s.Guard(lk)).Then(clientv3.OpPut("balance", v)).Commit()
		if err != nil {
			t.Fatal(err)
		}
		return r.Succeeded
	}
	if !put("1") {
		t.Fatal("guarded write under the lock failed")
	}
	if err := lk.Release(ctx); err != nil {
		t.Fatal(err)
	}
	next := mustObtain(t, l, "acct")
	defer next.Release(ctx)
	if put("2") {
		t.Fatal("guarded write of a released lock committed while another holds it")
	}
	if r, _ := cli.Get(ctx, "balance"); string(r.Kvs[0].Value) != "1" {
		t.Fatalf("balance %q", r.Kvs[0].Value)
	}
	if r, _ := cli.Txn(ctx).If(s.Guard(nil)).Commit(); r.Succeeded {
		t.Fatal("Guard(nil) held")
	}
}
