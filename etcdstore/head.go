package etcdstore

import (
	"context"
	"fmt"
	"time"

	"github.com/reqlock/reqlock/core/store"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// The head of the line holds the lock as soon as the lock's key is gone,
// as in ZooKeeper's recipe: nobody else can take it then (an acquire from
// outside the line needs the line empty, one from inside needs to head
// it), and the head keeps it for as long as its line key exists, since a
// key that joins later is created at a later revision. Its fence is its
// line key's create revision: it joined after the key it waited for was
// created, and after every waiter ahead of it, so fences still grow with
// every holder.
//
// So the head takes the lock with a read: one read-only transaction that
// checks it heads the line and the lock's key is gone, which etcd serves
// without a write. Release, renewal, Guard and the rest then work on its
// line key, compared by create revision (heldLock.inLine).

// claimHead is the attempt of a waiter that stands in line under
// revision rev. ok is false when it does not stand there any more (its
// key went: the line was dropped for a record, or it was taken out), or
// found a record past its retention: the caller's attempt, which writes,
// deals with those.
func (s *Store) claimHead(ctx context.Context, l store.Lease, waiter string, withRecord bool, rev int64, start time.Time) (g store.Grant, rec []byte, ok bool, err error) {
	key, lp, lk := l.Key, linePrefix(l.Key), lineKey(l.Key, waiter)
	cond := []clientv3.Cmp{
		clientv3.Compare(clientv3.CreateRevision(key), "=", 0),
		clientv3.Compare(clientv3.CreateRevision(lk), "=", rev),
		clientv3.Compare(clientv3.CreateRevision(lp), ">", rev-1).WithPrefix(),
		clientv3.Compare(clientv3.CreateRevision(markerKey(key, l.Token)), "=", 0),
		clientv3.Compare(clientv3.CreateRevision(markerKey(key, handedOverToken(waiter))), "=", 0),
	}
	then := []clientv3.Op{clientv3.OpGet(lk)}
	els := []clientv3.Op{
		clientv3.OpGet(key),
		clientv3.OpGet(lp, clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend)),
	}
	var r *clientv3.TxnResponse
	succeeded := false
	var resps []*pb.ResponseOp
	if withRecord {
		rk := recordKey(key)
		r, err = s.c.Txn(reqCtx(ctx)).
			If(clientv3.Compare(clientv3.CreateRevision(rk), "=", 0)).
			Then(clientv3.OpTxn(cond, then, els)).
			Else(clientv3.OpGet(rk)).
			Commit()
		if err != nil {
			return store.Grant{}, nil, true, err
		}
		if !r.Succeeded {
			kvs := r.Responses[0].GetResponseRange().Kvs
			if len(kvs) == 0 {
				return store.Grant{}, nil, false, nil
			}
			rec, live := decodeRecord(kvs[0].Value, time.Now())
			if !live {
				return store.Grant{}, nil, false, nil
			}
			return store.Grant{}, rec, true, nil
		}
		t := r.Responses[0].GetResponseTxn()
		succeeded, resps = t.Succeeded, t.Responses
	} else {
		r, err = s.c.Txn(reqCtx(ctx)).If(cond...).Then(then...).Else(els...).Commit()
		if err != nil {
			return store.Grant{}, nil, true, err
		}
		succeeded, resps = r.Succeeded, r.Responses
	}
	if succeeded {
		kvs := resps[0].GetResponseRange().Kvs
		if len(kvs) == 0 {
			return store.Grant{}, nil, false, nil
		}
		on := s.lineLeases.byLeaseID(clientv3.LeaseID(kvs[0].Lease))
		if on == nil {
			return store.Grant{}, nil, false, nil
		}
		v := on.validity(l.TTL, start)
		if v <= 0 && s.lineLeases.keepAlive(ctx, on, forceRenewal) == nil {
			v = on.validity(l.TTL, start)
		}
		if v <= 0 {
			// The read proves the head holds the lock in etcd, but its
			// line lease has no time left by our clock: a grant would be
			// one its holder cannot rely on. It leaves the line instead.
			if w := s.lines.take(waiter); w != nil {
				s.lines.orphaned(waiter, w)
			}
			return store.Grant{}, nil, true, fmt.Errorf("%w: the line lease has no time left to hold the lock on", ErrLeaseExpired)
		}
		s.held.add(l.Token, lk, rev, on, l.TTL, start, true)
		s.lines.done(waiter)
		return store.Grant{Fence: uint64(rev), Validity: v}, nil, true, nil
	}
	var holder *mvccpb.KeyValue
	if kvs := resps[0].GetResponseRange().Kvs; len(kvs) > 0 {
		holder = kvs[0]
	}
	line := resps[1].GetResponseRange().Kvs
	inLine := false
	for _, kv := range line {
		if string(kv.Key) == lk {
			inLine = true
		}
	}
	if !inLine {
		return store.Grant{}, nil, false, nil
	}
	s.lines.queued(waiter, key, lk, holder, line, r.Header.Revision)
	return store.Grant{}, nil, true, s.refusal(ctx, holder)
}
