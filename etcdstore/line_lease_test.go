package etcdstore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/etcdstore"
	"github.com/reqlock/reqlock/internal/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// A waiter whose line lease etcd expired because its keep-alives could not
// get through (not because someone revoked it) stops waiting once it can
// tell, and says why: ErrLeaseExpired.
func TestWaiterCutOffPastLineLeaseStopsWithReason(t *testing.T) {
	c := etcdtest.Start(t)
	cli := c.Client(t)
	holder := core.NewLocker(etcdstore.New(cli), core.WithTTL(5*time.Second))
	ctx := ctxFor(t, 40*time.Second)
	lk := mustObtain(t, holder, "k")
	defer lk.Release(ctx)

	p := faultproxy.Start(t, c.Members[0].DirectEndpoint())
	waiter := core.NewLocker(etcdstore.New(etcdtest.NewClient(t, p.Addr())), core.WithTTL(2*time.Second))
	errc := make(chan error, 1)
	go func() {
		got, err := waiter.Obtain(ctx, "k")
		if err == nil {
			_ = got.Release(ctx)
		}
		errc <- err
	}()
	skey, _ := holder.StoreKey("k")
	eventually(t, 10*time.Second, "waiter in line", func() bool {
		r, err := cli.Get(ctx, skey+"/line/", clientv3.WithPrefix())
		return err == nil && len(r.Kvs) == 1
	})
	p.Hold(faultproxy.Upstream)
	eventually(t, 10*time.Second, "the line lease to run out on etcd", func() bool {
		r, err := cli.Get(ctx, skey+"/line/", clientv3.WithPrefix())
		return err == nil && len(r.Kvs) == 0
	})
	p.Heal()
	select {
	case err := <-errc:
		if !errors.Is(err, etcdstore.ErrLeaseExpired) {
			t.Fatalf("waiter cut off past its line lease: %v, want ErrLeaseExpired", err)
		}
	case <-time.After(10 * time.Second):
		r, _ := cli.Get(ctx, skey+"/line/", clientv3.WithPrefix())
		t.Fatalf("the waiter whose line lease ran out still waits 10s after its link healed (line keys now: %d)", len(r.Kvs))
	}
}
