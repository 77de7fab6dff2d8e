package etcdstore

import (
	"context"
	"strings"

	"github.com/reqlock/reqlock/core"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Inspect implements core.Inspector with one read-only transaction (a
// linearizable read: no write, no revision), and a read of the holder's
// lease when held. Fence is the holder's; etcd keeps no fence for a free
// key, whose next fence is anyway above every one before.
func (s *Store) Inspect(ctx context.Context, key string) (core.Holding, error) {
	ctx, done := s.call(ctx)
	defer done()
	r, err := s.c.Txn(reqCtx(ctx)).Then(
		clientv3.OpGet(key),
		clientv3.OpGet(linePrefix(key), clientv3.WithPrefix(), clientv3.WithCountOnly()),
	).Commit()
	if err != nil {
		return core.Holding{}, s.failure("inspect", err)
	}
	h := core.Holding{Waiting: int(r.Responses[1].GetResponseRange().Count)}
	kvs := r.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 0 {
		return h, nil
	}
	kv := kvs[0]
	value := string(kv.Value)
	h.Held = true
	h.HandedOff = strings.HasPrefix(value, "~")
	h.Fence = uint64(kv.CreateRevision)
	_, h.Holder, _ = strings.Cut(value, ".")
	left, err := s.leaseLeft(ctx, clientv3.LeaseID(kv.Lease))
	if err != nil {
		return core.Holding{}, err
	}
	h.Lease = left
	return h, nil
}
