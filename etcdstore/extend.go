package etcdstore

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// maxTxnOps is etcd's default limit on the operations of one transaction
// (--max-txn-ops).
const maxTxnOps = 128

// Extend implements store.Store. Renewing a lock is renewing its lease, so a
// batch costs one keep-alive per lease its locks are on (one for locks
// taken together), skipped when that lease was renewed in the last sixth
// of its length, and one read-only transaction per 128 locks that checks
// each token still holds its key; they all go out at once. A lock whose TTL
// changed (Refresh) is moved to a lease of its new length, in a
// transaction of its own.
func (s *Store) Extend(ctx context.Context, ls []store.Lease) []store.Renewal {
	ctx, done := s.call(ctx)
	defer done()
	start := time.Now()
	out := make([]store.Renewal, len(ls))

	// The keep-alives of the leases this store put the locks on.
	var on []*lease
	for _, l := range ls {
		if h, ok := s.held.get(l.Token); ok && h.lease != nil && !slices.Contains(on, h.lease) {
			on = append(on, h.lease)
		}
	}
	kas := make(map[*lease]error, len(on))
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, l := range on {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.leases.keepAlive(ctx, l, time.Duration(l.secs)*time.Second*5/6)
			mu.Lock()
			kas[l] = err
			mu.Unlock()
		}()
	}

	// Who holds each key, read alongside.
	kvs := make([]*mvccpb.KeyValue, len(ls))
	readErr := make([]error, len(ls))
	for from := 0; from < len(ls); from += maxTxnOps {
		to := min(from+maxTxnOps, len(ls))
		wg.Add(1)
		go func() {
			defer wg.Done()
			ops := make([]clientv3.Op, 0, to-from)
			for _, l := range ls[from:to] {
				_, k := s.holds(l.Key, l.Token)
				ops = append(ops, clientv3.OpGet(k))
			}
			r, err := s.c.Txn(reqCtx(ctx)).Then(ops...).Commit()
			for i := from; i < to; i++ {
				if err != nil {
					readErr[i] = s.failure("extend", err)
				} else if got := r.Responses[i-from].GetResponseRange().Kvs; len(got) > 0 {
					kvs[i] = got[0]
				}
			}
		}()
	}
	wg.Wait()

	for i, l := range ls {
		kv := kvs[i]
		if readErr[i] != nil {
			out[i].Err = readErr[i]
			continue
		}
		h, known := s.held.get(l.Token)
		inLine := known && h.inLine
		if kv == nil || !inLine && string(kv.Value) != l.Token || inLine && kv.CreateRevision != h.fence {
			s.held.forget(l.Token)
			out[i].Err = store.ErrNotHeld
			continue
		}
		on := s.leases.byLeaseID(clientv3.LeaseID(kv.Lease))
		if inLine {
			// On its line lease, which it keeps: it is never moved.
			on = s.lineLeases.byLeaseID(clientv3.LeaseID(kv.Lease))
		}
		if on == nil && inLine {
			out[i].Err = store.ErrNotHeld
		} else if !inLine && (on == nil || on.secs != seconds(l.TTL)) {
			on, out[i].Err = s.move(ctx, l)
		} else if err, ok := kas[on]; ok {
			out[i].Err = err
		} else {
			out[i].Err = s.leases.keepAlive(ctx, on, time.Duration(on.secs)*time.Second*5/6)
		}
		if errors.Is(out[i].Err, ErrLeaseExpired) {
			// The lease went, and the lock with it (or it is about to).
			s.held.forget(l.Token)
			out[i].Err = store.ErrNotHeld
		}
		if out[i].Err == nil {
			if s.held.renewed(l.Token, l.Key, kv.CreateRevision, on, l.TTL, start) {
				out[i].Validity = on.validity(l.TTL, start)
			} else {
				// Its TTL ran out here before: it is being deleted.
				out[i].Err = store.ErrNotHeld
			}
		}
	}
	return out
}

// move puts the lock l on the current lease of its length, keeping its
// value and create revision (the fence), if l.Token still holds it.
func (s *Store) move(ctx context.Context, l store.Lease) (*lease, error) {
	to, err := s.leases.current(ctx, l.TTL)
	if err != nil {
		return nil, err
	}
	r, err := s.c.Txn(reqCtx(ctx)).
		If(clientv3.Compare(clientv3.Value(l.Key), "=", l.Token)).
		Then(clientv3.OpPut(l.Key, "", clientv3.WithIgnoreValue(), clientv3.WithLease(to.id))).
		Commit()
	if err != nil {
		return nil, s.failure("extend", err)
	}
	if !r.Succeeded {
		s.held.forget(l.Token)
		return nil, store.ErrNotHeld
	}
	return to, nil
}
