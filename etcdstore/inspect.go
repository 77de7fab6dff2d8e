package etcdstore

import (
	"context"
	"strings"

	"github.com/reqlock/reqlock/core/store"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Inspect implements store.Inspector with one read-only transaction (a
// linearizable read: no write, no revision), and a read of the holder's
// lease when held. The holder is the lock's key's, or, with the key gone
// and a line, the head of the line's (HandedOff). Fence is the holder's;
// etcd keeps no fence for a free key, whose next fence is anyway above
// every one before.
func (s *Store) Inspect(ctx context.Context, key string) (store.Holding, error) {
	ctx, done := s.call(ctx)
	defer done()
	lp := linePrefix(key)
	r, err := s.c.Txn(reqCtx(ctx)).Then(
		clientv3.OpGet(key),
		clientv3.OpGet(lp, clientv3.WithPrefix(), clientv3.WithCountOnly()),
		clientv3.OpGet(lp, clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend), clientv3.WithLimit(1)),
	).Commit()
	if err != nil {
		return store.Holding{}, s.failure("inspect", err)
	}
	h := store.Holding{Waiting: int(r.Responses[1].GetResponseRange().Count)}
	var leaseID clientv3.LeaseID
	if kvs := r.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
		kv := kvs[0]
		value := string(kv.Value)
		h.Held = true
		h.HandedOff = strings.HasPrefix(value, "~")
		h.Fence = uint64(kv.CreateRevision)
		_, h.Holder, _ = strings.Cut(value, ".")
		leaseID = clientv3.LeaseID(kv.Lease)
	} else if heads := r.Responses[2].GetResponseRange().Kvs; len(heads) > 0 {
		// The head of the line holds it (head.go), whether or not it has
		// claimed it yet; it is no longer waiting.
		head := heads[0]
		h.Held, h.HandedOff, h.Waiting = true, true, h.Waiting-1
		h.Fence = uint64(head.CreateRevision)
		_, h.Holder, _ = strings.Cut(strings.TrimPrefix(string(head.Key), lp), ".")
		leaseID = clientv3.LeaseID(head.Lease)
	} else {
		return h, nil
	}
	left, err := s.leaseLeft(ctx, leaseID)
	if err != nil {
		return store.Holding{}, err
	}
	h.Lease = left
	return h, nil
}
