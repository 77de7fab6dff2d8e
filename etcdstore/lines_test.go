package etcdstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/etcdstore"
	"github.com/reqlock/reqlock/internal/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Waiters on different Lockers (instances) are served in the order they
// joined the line, each woken by the deletion of the one ahead of it.
func TestWaitersServedInLineOrder(t *testing.T) {
	c := etcdtest.Start(t)
	holderStore := etcdstore.New(c.Client(t))
	holder := core.NewLocker(holderStore, core.WithTTL(5*time.Second))
	ctx := ctxFor(t, 30*time.Second)
	first := mustObtain(t, holder, "k")

	const n = 4
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i := range n {
		s := etcdstore.New(c.Client(t))
		l := core.NewLocker(s, core.WithTTL(5*time.Second))
		wg.Add(1)
		go func() {
			defer wg.Done()
			lk, err := l.Obtain(ctx, "k")
			if err != nil {
				t.Errorf("waiter %d: %v", i, err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
			_ = lk.Release(ctx)
		}()
		// The next waiter joins only once this one stands in line.
		eventually(t, 10*time.Second, "waiter in line", func() bool {
			h, err := holder.Inspect(ctx, "k")
			return err == nil && h.Waiting == i+1
		})
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if fmt.Sprint(order) != "[0 1 2 3]" {
		t.Fatalf("served in order %v, want [0 1 2 3]", order)
	}
	h, err := holder.Inspect(ctx, "k")
	if err != nil || h.Held || h.Waiting != 0 {
		t.Fatalf("after all: %+v %v", h, err)
	}
}

// A waiter whose lease etcd expired stops waiting, with ErrLeaseExpired.
func TestWaiterWithExpiredLeaseStops(t *testing.T) {
	c := etcdtest.Start(t)
	cli := c.Client(t)
	holder := core.NewLocker(etcdstore.New(c.Client(t)), core.WithTTL(5*time.Second))
	ctx := ctxFor(t, 30*time.Second)
	lk := mustObtain(t, holder, "k")
	defer lk.Release(ctx)

	ws := etcdstore.New(cli)
	waiter := core.NewLocker(ws, core.WithTTL(2*time.Second))
	errc := make(chan error, 1)
	go func() {
		_, err := waiter.Obtain(ctx, "k")
		errc <- err
	}()
	skey, _ := holder.StoreKey("k")
	var leaseID int64
	eventually(t, 10*time.Second, "waiter in line", func() bool {
		r, err := cli.Get(ctx, skey+"/line/", clientv3.WithPrefix())
		if err != nil || len(r.Kvs) == 0 {
			return false
		}
		leaseID = r.Kvs[0].Lease
		return true
	})
	if _, err := cli.Revoke(ctx, clientv3.LeaseID(leaseID)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, etcdstore.ErrLeaseExpired) {
			t.Fatalf("waiter: %v, want ErrLeaseExpired", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter whose lease was revoked still waits")
	}
}

// A waiter that gives up leaves the line, and the one behind it moves up.
func TestWaiterGivingUpLeavesLine(t *testing.T) {
	c := etcdtest.Start(t)
	holder := core.NewLocker(etcdstore.New(c.Client(t)), core.WithTTL(5*time.Second))
	ctx := ctxFor(t, 30*time.Second)
	lk := mustObtain(t, holder, "k")

	quitter := core.NewLocker(etcdstore.New(c.Client(t)), core.WithTTL(5*time.Second))
	qctx, quit := context.WithCancel(ctx)
	qerr := make(chan error, 1)
	go func() { _, err := quitter.Obtain(qctx, "k"); qerr <- err }()
	eventually(t, 10*time.Second, "first waiter in line", func() bool {
		h, _ := holder.Inspect(ctx, "k")
		return h.Waiting == 1
	})
	patient := core.NewLocker(etcdstore.New(c.Client(t)), core.WithTTL(5*time.Second))
	perr := make(chan error, 1)
	go func() {
		lk, err := patient.Obtain(ctx, "k")
		if err == nil {
			err = lk.Release(ctx)
		}
		perr <- err
	}()
	eventually(t, 10*time.Second, "second waiter in line", func() bool {
		h, _ := holder.Inspect(ctx, "k")
		return h.Waiting == 2
	})
	quit()
	if err := <-qerr; !errors.Is(err, context.Canceled) {
		t.Fatalf("quitter: %v", err)
	}
	eventually(t, 10*time.Second, "quitter out of line", func() bool {
		h, _ := holder.Inspect(ctx, "k")
		return h.Waiting == 1
	})
	if err := lk.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-perr; err != nil {
		t.Fatalf("patient waiter: %v", err)
	}
}
