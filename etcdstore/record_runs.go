package etcdstore

import (
	"context"
	"time"

	"github.com/reqlock/reqlock/core/store"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// runKey names a key's run mark (store.RunMarker): the token of the run
// and when its mark ends, as a record is kept (encodeRecord), on a pooled
// lease.
func runKey(key string) string { return key + "/run" }

// MarkRun implements store.RunMarker: a read of the mark under the holder's
// check, then, unless it is another run's and again is false, a write of
// this run's under the same check and the mark as read: two round trips,
// once more if the mark changed between them.
func (s *Store) MarkRun(ctx context.Context, key, token string, retention time.Duration, again bool) (bool, error) {
	ctx, done := s.call(ctx)
	defer done()
	for {
		cmp, _ := s.holds(key, token)
		r, err := s.c.Txn(reqCtx(ctx)).If(cmp).Then(clientv3.OpGet(runKey(key))).Commit()
		if err != nil {
			return false, s.failure("mark run", err)
		}
		if !r.Succeeded {
			return false, store.ErrNotHeld
		}
		var rev int64 // the mark's ModRevision as read; 0: none
		doubt := false
		if kvs := r.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
			rev = kvs[0].ModRevision
			owner, live := decodeRecord(kvs[0].Value, time.Now())
			doubt = live && string(owner) != token
		}
		if doubt && !again {
			return true, nil
		}
		var ok, changed bool
		err = s.withPooled(ctx, retention, func(id clientv3.LeaseID) error {
			put := clientv3.OpPut(runKey(key), encodeRecord([]byte(token), time.Now().Add(retention)), clientv3.WithLease(id))
			same := clientv3.Compare(clientv3.ModRevision(runKey(key)), "=", rev)
			r, err := s.c.Txn(reqCtx(ctx)).If(cmp, same).Then(put).Else(clientv3.OpTxn([]clientv3.Cmp{same}, nil, nil)).Commit()
			if err != nil {
				return err
			}
			ok = r.Succeeded
			changed = !ok && !r.Responses[0].GetResponseTxn().Succeeded
			return nil
		})
		switch {
		case err != nil:
			return false, s.failure("mark run", err)
		case ok:
			return doubt, nil
		case !changed:
			return false, store.ErrNotHeld
		}
	}
}

// UnmarkRun implements store.RunMarker: one transaction, under the
// holder's check.
func (s *Store) UnmarkRun(ctx context.Context, key, token string) error {
	ctx, done := s.call(ctx)
	defer done()
	cmp, _ := s.holds(key, token)
	r, err := s.c.Txn(reqCtx(ctx)).If(cmp).Then(clientv3.OpDelete(runKey(key))).Commit()
	if err != nil {
		return s.failure("unmark run", err)
	}
	if !r.Succeeded {
		return store.ErrNotHeld
	}
	return nil
}

// ForgetRun implements store.RunMarker.
func (s *Store) ForgetRun(ctx context.Context, key string) error {
	ctx, done := s.call(ctx)
	defer done()
	if _, err := s.c.Delete(reqCtx(ctx), runKey(key)); err != nil {
		return s.failure("forget run", err)
	}
	return nil
}
