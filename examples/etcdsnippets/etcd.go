package etcdsnippets

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/etcdstore"
)

// Open is docs/etcd.md's "Using it": a Locker on a three-member cluster,
// handed to use; the client is closed when use returns.
func Open(use func(*core.Locker)) error {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"10.0.0.1:2379", "10.0.0.2:2379", "10.0.0.3:2379"}})
	if err != nil {
		return err
	}
	store := etcdstore.New(cli)
	locker := core.NewLocker(store) // as on any store
	defer cli.Close()
	use(locker)
	return nil
}

// Guarded is docs/etcd.md's Guard: a write in the caller's own transaction
// that commits only while ctx's lock still holds its key.
func Guarded(ctx context.Context, cli *clientv3.Client, store *etcdstore.Store) (bool, error) {
	lk, _ := core.FromContext(ctx)
	r, err := cli.Txn(ctx).If(store.Guard(lk)).Then(clientv3.OpPut("balance", "10")).Commit()
	// r.Succeeded is false once the lock expired, was released or passed on.
	if err != nil {
		return false, err
	}
	return r.Succeeded, nil
}
