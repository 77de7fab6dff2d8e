package etcdstore

import (
	"context"

	"github.com/reqlock/reqlock/core/store"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Cancel implements store.Canceler: one transaction deletes the key if
// l.Token holds it and, either way, leaves a cancel marker for the token,
// which every acquire checks in its own transaction: an acquire of l still
// on its way takes nothing when it lands, for as long as the marker lives
// (WithMarkerTTL).
func (s *Store) Cancel(ctx context.Context, l store.Lease) error {
	ctx, done := s.call(ctx)
	defer done()
	mk := markerKey(l.Key, l.Token)
	var held bool
	err := s.withPooled(ctx, s.markerTTL, func(id clientv3.LeaseID) error {
		mark := clientv3.OpPut(mk, "", clientv3.WithLease(id))
		cmp, k := s.holds(l.Key, l.Token)
		r, err := s.c.Txn(reqCtx(ctx)).If(cmp).Then(clientv3.OpDelete(k), mark).Else(mark).Commit()
		if err == nil {
			held = r.Succeeded
		}
		return err
	})
	if err != nil {
		return s.failure("cancel", err)
	}
	s.held.forget(l.Token)
	if !held {
		return store.ErrNotHeld
	}
	return nil
}
