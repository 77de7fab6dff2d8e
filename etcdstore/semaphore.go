package etcdstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// The permits of a key K (store.Semaphores), apart from its lock:
//
//	K/permits/<hash>         a permit: value the holder's token, on a lease
//	                         of its own, which is its lease; its create
//	                         revision is the fence
//	K/permit-cancel/<hash>   a cancel marker: an acquire with that token
//	                         takes nothing while it lives
//
// etcd cannot count keys inside a transaction, so an acquire reads the
// permits, and puts its own only if no permit was put since that read (a
// comparison of every permit's ModRevision with the read's revision): a
// release or an expiry meanwhile only frees a place. A lease per permit
// lets an expired one go on its own, whatever becomes of the other
// holders, and a release revoke it.
func permitPrefix(key string) string { return key + "/permits/" }
func permitKey(key, token string) string {
	return permitPrefix(key) + tokenHash(token)
}
func permitMarkerKey(key, token string) string { return key + "/permit-cancel/" + tokenHash(token) }

func tokenHash(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:12])
}

var _ store.Semaphores = (*Store)(nil)

// AcquirePermit implements store.Semaphores: a read of the key's permits,
// then, if fewer than limit, a lease and a transaction that puts the
// permit unless another was put since the read; three round trips, and
// again from the read if one was.
func (s *Store) AcquirePermit(ctx context.Context, l store.Lease, limit int) (store.Grant, error) {
	ctx, done := s.call(ctx)
	defer done()
	start := time.Now()
	pk, prefix := permitKey(l.Key, l.Token), permitPrefix(l.Key)
	var id clientv3.LeaseID
	defer func() {
		if id != clientv3.NoLease { // granted, then not used
			_, _ = s.c.Revoke(ctx, id)
		}
	}()
	for {
		r, err := s.c.Get(reqCtx(ctx), prefix, clientv3.WithPrefix())
		if err != nil {
			return store.Grant{}, s.failure("acquire permit", err)
		}
		holders := r.Kvs
		for _, kv := range holders {
			if kv.Lease != 0 && string(kv.Value) == l.Token {
				// Our own: a copy of this attempt got here first.
				return store.Grant{Fence: uint64(kv.CreateRevision), Validity: store.Validity(l.TTL)}, nil
			}
		}
		if len(holders) >= limit {
			return store.Grant{}, s.full(ctx, holders)
		}
		if id == clientv3.NoLease {
			g, err := s.c.Grant(reqCtx(ctx), seconds(l.TTL))
			if err != nil {
				return store.Grant{}, s.failure("acquire permit", err)
			}
			id = g.ID
		}
		t, err := s.c.Txn(reqCtx(ctx)).If(
			clientv3.Compare(clientv3.ModRevision(prefix), "<", r.Header.Revision+1).WithPrefix(),
			clientv3.Compare(clientv3.CreateRevision(permitMarkerKey(l.Key, l.Token)), "=", 0),
		).Then(clientv3.OpPut(pk, l.Token, clientv3.WithLease(id))).
			Else(clientv3.OpGet(permitMarkerKey(l.Key, l.Token), clientv3.WithCountOnly())).Commit()
		if err != nil {
			return store.Grant{}, s.failure("acquire permit", err)
		}
		if t.Succeeded {
			s.permitLeases.Store(l.Token, id)
			id = clientv3.NoLease
			// The lease was granted after start: it runs at least its
			// whole length from then.
			return store.Grant{Fence: uint64(t.Header.Revision), Validity: store.Validity(min(l.TTL, time.Duration(seconds(l.TTL))*time.Second))}, nil
		}
		if t.Responses[0].GetResponseRange().Count > 0 {
			return store.Grant{}, s.failure("acquire permit", errCancelledPermit)
		}
		if time.Since(start) > l.TTL {
			// Contended for longer than a lease: say full, and let the
			// caller's retry policy space the attempts.
			return store.Grant{}, &store.NotObtainedError{}
		}
	}
}

// errCancelledPermit is a permit acquire that landed after it was
// cancelled: it took nothing.
var errCancelledPermit = errors.New("permit acquire landed after it was cancelled")

// full is the refusal of a full key: how long the shortest lease among
// holders runs, read in parallel and briefly (best effort).
func (s *Store) full(ctx context.Context, holders []*mvccpb.KeyValue) error {
	taken := &store.NotObtainedError{}
	lctx, cancel := context.WithTimeout(ctx, leaseReadTimeout)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, kv := range holders[:min(len(holders), 8)] {
		wg.Go(func() {
			left, err := s.leaseLeft(lctx, clientv3.LeaseID(kv.Lease))
			mu.Lock()
			defer mu.Unlock()
			if err == nil && left > 0 && (taken.Remaining == 0 || left < taken.Remaining) {
				taken.Remaining = left
			}
		})
	}
	wg.Wait()
	return taken
}

// ExtendPermits implements store.Semaphores: one read-only transaction per
// 128 permits checks that each token still holds its permit, then each
// permit's lease is kept alive, all at once.
func (s *Store) ExtendPermits(ctx context.Context, ls []store.Lease) []store.Renewal {
	ctx, done := s.call(ctx)
	defer done()
	out := make([]store.Renewal, len(ls))
	kvs := make([]*mvccpb.KeyValue, len(ls))
	for from := 0; from < len(ls); from += maxTxnOps {
		to := min(from+maxTxnOps, len(ls))
		ops := make([]clientv3.Op, 0, to-from)
		for _, l := range ls[from:to] {
			ops = append(ops, clientv3.OpGet(permitKey(l.Key, l.Token)))
		}
		r, err := s.c.Txn(reqCtx(ctx)).Then(ops...).Commit()
		for i := from; i < to; i++ {
			if err != nil {
				out[i].Err = s.failure("extend permit", err)
			} else if got := r.Responses[i-from].GetResponseRange().Kvs; len(got) > 0 && string(got[0].Value) == ls[i].Token {
				kvs[i] = got[0]
			} else {
				out[i].Err = store.ErrNotHeld
			}
		}
	}
	var wg sync.WaitGroup
	for i, kv := range kvs {
		if kv == nil {
			continue
		}
		wg.Go(func() {
			k, err := s.c.KeepAliveOnce(reqCtx(ctx), clientv3.LeaseID(kv.Lease))
			switch {
			case errors.Is(err, rpctypes.ErrLeaseNotFound):
				out[i].Err = store.ErrNotHeld
			case err != nil:
				out[i].Err = s.failure("extend permit", err)
			case k.TTL != seconds(ls[i].TTL):
				// A lease keeps the length it was granted with: a permit
				// whose TTL changed (Refresh) moves to a lease of its own
				// of the new length.
				out[i].Err = s.movePermit(ctx, ls[i], kv)
			}
			if out[i].Err == nil {
				out[i].Validity = store.Validity(min(ls[i].TTL, time.Duration(seconds(ls[i].TTL))*time.Second))
			}
		})
	}
	wg.Wait()
	return out
}

// movePermit puts the permit kv of l on a new lease of l.TTL, keeping its
// value and create revision (the fence), if l.Token still holds it, and
// revokes the old lease.
func (s *Store) movePermit(ctx context.Context, l store.Lease, kv *mvccpb.KeyValue) error {
	g, err := s.c.Grant(reqCtx(ctx), seconds(l.TTL))
	if err != nil {
		return s.failure("extend permit", err)
	}
	pk := permitKey(l.Key, l.Token)
	r, err := s.c.Txn(reqCtx(ctx)).If(clientv3.Compare(clientv3.Value(pk), "=", l.Token)).
		Then(clientv3.OpPut(pk, "", clientv3.WithIgnoreValue(), clientv3.WithLease(g.ID))).Commit()
	if err != nil || !r.Succeeded {
		_, _ = s.c.Revoke(ctx, g.ID)
		if err != nil {
			return s.failure("extend permit", err)
		}
		return store.ErrNotHeld
	}
	s.permitLeases.Store(l.Token, g.ID)
	_, _ = s.c.Revoke(ctx, clientv3.LeaseID(kv.Lease))
	return nil
}

// ReleasePermit implements store.Semaphores: one transaction deletes the
// permit if the token still holds it; its lease is revoked after.
func (s *Store) ReleasePermit(ctx context.Context, key, token string) error {
	return s.dropPermit(ctx, store.Lease{Key: key, Token: token}, false)
}

// CancelPermit implements store.Semaphores: the permit is deleted if the
// token holds it, and a marker left for the token (WithMarkerTTL) makes an
// acquire with it still on its way take nothing when it lands.
func (s *Store) CancelPermit(ctx context.Context, l store.Lease) error {
	return s.dropPermit(ctx, l, true)
}

func (s *Store) dropPermit(ctx context.Context, l store.Lease, mark bool) error {
	ctx, done := s.call(ctx)
	defer done()
	pk := permitKey(l.Key, l.Token)
	held := false
	txn := func(extra ...clientv3.Op) error {
		r, err := s.c.Txn(reqCtx(ctx)).If(clientv3.Compare(clientv3.Value(pk), "=", l.Token)).
			Then(append([]clientv3.Op{clientv3.OpDelete(pk)}, extra...)...).Else(extra...).Commit()
		if err == nil {
			held = r.Succeeded
		}
		return err
	}
	var err error
	if mark {
		err = s.withPooled(ctx, s.markerTTL, func(id clientv3.LeaseID) error {
			return txn(clientv3.OpPut(permitMarkerKey(l.Key, l.Token), "", clientv3.WithLease(id)))
		})
	} else {
		err = txn()
	}
	if err != nil {
		return s.failure("release permit", err)
	}
	if id, ok := s.permitLeases.LoadAndDelete(l.Token); ok {
		// Nothing is left on it; revoking spares etcd its expiry.
		_, _ = s.c.Revoke(ctx, id.(clientv3.LeaseID))
	}
	if !held {
		return store.ErrNotHeld
	}
	return nil
}

// PermitTTL implements store.Semaphores.
func (s *Store) PermitTTL(ctx context.Context, key, token string) (time.Duration, error) {
	ctx, done := s.call(ctx)
	defer done()
	r, err := s.c.Get(reqCtx(ctx), permitKey(key, token))
	if err != nil {
		return 0, s.failure("permit ttl", err)
	}
	if len(r.Kvs) == 0 || string(r.Kvs[0].Value) != token {
		return 0, store.ErrNotHeld
	}
	t, err := s.c.TimeToLive(reqCtx(ctx), clientv3.LeaseID(r.Kvs[0].Lease))
	if err != nil {
		return 0, s.failure("permit ttl", err)
	}
	if t.TTL <= 0 {
		return 0, store.ErrNotHeld
	}
	return time.Duration(t.TTL) * time.Second, nil
}

// InspectPermits implements store.Semaphores: one read, and a read of each
// holder's lease; nothing changes.
func (s *Store) InspectPermits(ctx context.Context, key string) ([]store.Holding, error) {
	ctx, done := s.call(ctx)
	defer done()
	r, err := s.c.Get(reqCtx(ctx), permitPrefix(key), clientv3.WithPrefix(),
		clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
	if err != nil {
		return nil, s.failure("inspect permits", err)
	}
	hs := make([]store.Holding, len(r.Kvs))
	var wg sync.WaitGroup
	errs := make([]error, len(r.Kvs))
	for i, kv := range r.Kvs {
		_, label, _ := strings.Cut(string(kv.Value), store.HolderSep)
		hs[i] = store.Holding{Held: true, Fence: uint64(kv.CreateRevision), Holder: label}
		wg.Go(func() {
			t, err := s.c.TimeToLive(reqCtx(ctx), clientv3.LeaseID(kv.Lease))
			if err == nil {
				hs[i].Lease = time.Duration(max(t.TTL, 0)) * time.Second
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, s.failure("inspect permits", err)
	}
	// A permit whose lease ran out is listed, with no lease left, until
	// etcd deletes it (its leader revokes expired leases every half
	// second or so): it keeps its place until then.
	return hs, nil
}
