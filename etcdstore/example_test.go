package etcdstore_test

import (
	"context"
	"fmt"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/etcdstore"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// A lock on etcd, and a write that commits only while the lock is held.
func Example() {
	cli, err := clientv3.New(clientv3.Config{Endpoints: exampleEndpoints, DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		panic(err)
	}
	defer cli.Close()
	store := etcdstore.New(cli)
	locker := core.NewLocker(store, core.WithTTL(5*time.Second))
	ctx := context.Background()

	lock, err := locker.Obtain(ctx, "order-42")
	if err != nil {
		panic(err)
	}
	r, err := cli.Txn(ctx).If(store.Guard(lock)).Then(clientv3.OpPut("order-42/state", "paid")).Commit()
	if err != nil {
		panic(err)
	}
	fmt.Println("written under the lock:", r.Succeeded)
	if err := lock.Release(ctx); err != nil {
		panic(err)
	}

	// Released: the same guarded write no longer commits.
	r, err = cli.Txn(ctx).If(store.Guard(lock)).Then(clientv3.OpPut("order-42/state", "paid twice")).Commit()
	if err != nil {
		panic(err)
	}
	fmt.Println("written after the release:", r.Succeeded)
	// Output:
	// written under the lock: true
	// written after the release: false
}
