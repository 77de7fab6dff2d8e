package etcdstore

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/reqlock/reqlock/core"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// maxTxnOps is etcd's default limit on the operations of one transaction
// (--max-txn-ops).
const maxTxnOps = 128

// Extend implements core.Store. Renewing a lock is renewing its lease, so a
// batch costs one keep-alive per lease length (one for a Locker), skipped
// when the lease was renewed in the last sixth of its length, plus one
// read-only transaction per 128 locks that checks each token still holds
// its key; the two go out together. A lock whose TTL changed (Refresh) is
// moved to the lease of its new length, in a transaction of its own.
func (s *Store) Extend(ctx context.Context, ls []core.Lease) []core.Renewal {
	ctx, done := s.call(ctx)
	defer done()
	start := time.Now()
	out := make([]core.Renewal, len(ls))

	// The current lease of each length, and its keep-alive.
	type class struct {
		l   *lease
		err error
	}
	var lengths []int64
	for _, l := range ls {
		if secs := seconds(l.TTL); !slices.Contains(lengths, secs) {
			lengths = append(lengths, secs)
		}
	}
	classes := make(map[int64]*class, len(lengths))
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, secs := range lengths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			length := time.Duration(secs) * time.Second
			c := &class{}
			s.leases.mu.Lock()
			c.l = s.leases.byClass[secs]
			s.leases.mu.Unlock()
			if c.l == nil || c.l.isDead(time.Now()) {
				c.l, c.err = s.leases.current(ctx, length)
			} else {
				c.err = s.leases.keepAlive(ctx, c.l, length*5/6)
				if errors.Is(c.err, ErrLeaseExpired) {
					// Its locks are gone; a lock moving here needs a new one.
					c.l, c.err = s.leases.current(ctx, length)
				}
			}
			mu.Lock()
			classes[secs] = c
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
				ops = append(ops, clientv3.OpGet(l.Key))
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
		switch {
		case readErr[i] != nil:
			out[i].Err = readErr[i]
			continue
		case kv == nil || string(kv.Value) != l.Token:
			s.held.forget(l.Token)
			out[i].Err = core.ErrNotHeld
			continue
		}
		c := classes[seconds(l.TTL)]
		if c.err != nil {
			out[i].Err = c.err
			continue
		}
		id := clientv3.LeaseID(kv.Lease)
		if id != c.l.id {
			if old, ours := s.leases.left(id, time.Now()); ours && old <= 0 {
				// On a lease of ours that has run out: gone, or about to be.
				s.held.forget(l.Token)
				out[i].Err = core.ErrNotHeld
				continue
			}
			if err := s.move(ctx, l, c.l); err != nil {
				out[i].Err = err
				continue
			}
		}
		out[i].Validity = c.l.validity(l.TTL, start)
	}
	return out
}

// move puts the lock l on lease to, keeping its value and create revision
// (the fence), if l.Token still holds it.
func (s *Store) move(ctx context.Context, l core.Lease, to *lease) error {
	r, err := s.c.Txn(reqCtx(ctx)).
		If(clientv3.Compare(clientv3.Value(l.Key), "=", l.Token)).
		Then(clientv3.OpPut(l.Key, "", clientv3.WithIgnoreValue(), clientv3.WithLease(to.id))).
		Commit()
	if err != nil {
		return s.failure("extend", err)
	}
	if !r.Succeeded {
		s.held.forget(l.Token)
		return core.ErrNotHeld
	}
	return nil
}
