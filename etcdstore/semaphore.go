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
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
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
//	                         (or of that waiter, '~' + waiter) takes
//	                         nothing while it lives
//	K/permit-line/<waiter>   a waiter in the permits' line, on its store's
//	                         line lease (semaphore_lines.go)
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

// AcquirePermit implements store.Semaphores: a read of the key's permits
// and its line, then, if fewer than limit are held and the places left
// outnumber the waiters, a lease and a transaction that puts the permit
// unless another was put, or a waiter joined, since the read; three round
// trips, and again from the read if one was.
func (s *Store) AcquirePermit(ctx context.Context, l store.Lease, limit int) (store.Grant, error) {
	return s.acquirePermit(ctx, l, limit, "")
}

// acquirePermit is AcquirePermit for waiter ("" for none): refused, it
// joins the key's permit line (semaphore_lines.go), once, and watches what
// it waits for.
func (s *Store) acquirePermit(ctx context.Context, l store.Lease, limit int, waiter string) (store.Grant, error) {
	ctx, done := s.call(ctx)
	defer done()
	start := time.Now()
	pk, prefix, lp := permitKey(l.Key, l.Token), permitPrefix(l.Key), permitLinePrefix(l.Key)
	// Neither this attempt nor its waiter was cancelled (a waiter that left
	// leaves a marker too): an attempt that lands late takes nothing, and
	// stands in no line.
	unmarked := []clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(permitMarkerKey(l.Key, l.Token)), "=", 0)}
	marks := []clientv3.Op{clientv3.OpGet(permitMarkerKey(l.Key, l.Token), clientv3.WithCountOnly())}
	var lk string
	if waiter != "" {
		lk = permitLineKey(l.Key, waiter)
		wm := permitMarkerKey(l.Key, handedOverToken(waiter))
		unmarked = append(unmarked, clientv3.Compare(clientv3.CreateRevision(wm), "=", 0))
		marks = append(marks, clientv3.OpGet(wm, clientv3.WithCountOnly()))
		if err := s.lines.alive(waiter, start); err != nil {
			// Its place went with the lease it stood on (its process was
			// paused, say): it stands in line again, at the back.
			if w := s.lines.take(waiter); w != nil {
				if err := s.dropFromLine(w.lk, w.rev); err != nil {
					return store.Grant{}, s.failure("acquire permit", err)
				}
			}
		}
	}
	marked := func(resps []*pb.ResponseOp) bool {
		for _, r := range resps {
			if r.GetResponseRange().Count > 0 {
				return true
			}
		}
		return false
	}
	var id clientv3.LeaseID
	defer func() {
		if id != clientv3.NoLease { // granted, then not used
			_, _ = s.c.Revoke(ctx, id)
		}
	}()
	lineRead := []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithKeysOnly(),
		clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend)}
	joins := 0
	for {
		r, err := s.c.Txn(reqCtx(ctx)).Then(clientv3.OpGet(prefix, clientv3.WithPrefix()), clientv3.OpGet(lp, lineRead...)).Commit()
		if err != nil {
			return store.Grant{}, s.failure("acquire permit", err)
		}
		holders, line := r.Responses[0].GetResponseRange().Kvs, r.Responses[1].GetResponseRange().Kvs
		for _, kv := range holders {
			if kv.Lease != 0 && string(kv.Value) == l.Token {
				// Our own: a copy of this attempt got here first.
				return store.Grant{Fence: uint64(kv.CreateRevision), Validity: store.Validity(l.TTL)}, nil
			}
		}
		// The places left, and the waiters ahead of this caller.
		room, place := limit-len(holders), linePlace(line, lk)
		ahead := len(line)
		if place >= 0 {
			ahead = place
		}
		if room > 0 && ahead < room {
			if id == clientv3.NoLease {
				g, err := s.c.Grant(reqCtx(ctx), seconds(l.TTL))
				if err != nil {
					return store.Grant{}, s.failure("acquire permit", err)
				}
				id = g.ID
			}
			cond := append([]clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(prefix), "<", r.Header.Revision+1).WithPrefix()}, unmarked...)
			take := []clientv3.Op{clientv3.OpPut(pk, l.Token, clientv3.WithLease(id))}
			if place >= 0 {
				// Still in its place; leaving it wakes the one behind.
				cond = append(cond, clientv3.Compare(clientv3.CreateRevision(lk), "=", line[place].CreateRevision))
				take = append(take, clientv3.OpDelete(lk))
			} else {
				// Nobody joined the line since the read.
				cond = append(cond, clientv3.Compare(clientv3.CreateRevision(lp), "<", r.Header.Revision+1).WithPrefix())
			}
			t, err := s.c.Txn(reqCtx(ctx)).If(cond...).Then(take...).Else(marks...).Commit()
			if err != nil {
				return store.Grant{}, s.failure("acquire permit", err)
			}
			if t.Succeeded {
				s.permitLeases.Store(l.Token, id)
				id = clientv3.NoLease
				if waiter != "" {
					s.lines.done(waiter)
				}
				// The lease was granted after start: it runs at least its
				// whole length from then.
				return store.Grant{Fence: uint64(t.Header.Revision), Validity: store.Validity(min(l.TTL, time.Duration(seconds(l.TTL))*time.Second))}, nil
			}
			if marked(t.Responses) {
				return store.Grant{}, s.failure("acquire permit", errCancelledPermit)
			}
			if time.Since(start) > l.TTL {
				// Contended for longer than a lease: say full, and let the
				// caller's retry policy space the attempts.
				return store.Grant{}, &store.NotObtainedError{}
			}
			continue
		}
		refused := func() error {
			if room > 0 {
				return &store.NotObtainedError{} // the places left are the line's
			}
			return s.full(ctx, holders)
		}
		if waiter == "" {
			return store.Grant{}, refused()
		}
		if place < 0 {
			if joins == 2 {
				// Joined twice, and gone from the line by the next read
				// (its line lease ended): the caller tries again.
				return store.Grant{}, refused()
			}
			joins++
			wl, err := s.lineLeases.current(ctx, lineTTL(l.TTL))
			if err != nil {
				return store.Grant{}, err
			}
			t, err := s.c.Txn(reqCtx(ctx)).
				If(append([]clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(lk), "=", 0)}, unmarked...)...).
				Then(clientv3.OpPut(lk, "", clientv3.WithLease(wl.id)), clientv3.OpGet(lp, lineRead...)).
				Else(append([]clientv3.Op{clientv3.OpGet(lp, lineRead...)}, marks...)...).Commit()
			if errors.Is(err, rpctypes.ErrLeaseNotFound) {
				// etcd ended the line lease before our clock said it
				// could: mark it so, and join on a new one.
				_ = s.lineLeases.keepAlive(ctx, wl, forceRenewal)
				continue
			}
			if err != nil {
				return store.Grant{}, s.failure("acquire permit", err)
			}
			resps := t.Responses
			if t.Succeeded {
				resps = resps[1:]
			} else if marked(resps[1:]) {
				return store.Grant{}, s.failure("acquire permit", errCancelledPermit)
			}
			line = resps[0].GetResponseRange().Kvs
			if place = linePlace(line, lk); place < 0 || place < room {
				// Gone already, or the line moved up meanwhile: look again.
				continue
			}
		}
		pred, predRev := "", int64(0)
		if place > 0 {
			pred, predRev = string(line[place-1].Key), line[place-1].CreateRevision
		}
		s.lines.queuedPermit(l.Key, waiter, lk, line[place], pred, predRev, holders)
		return store.Grant{}, refused()
	}
}

// linePlace is the index of line key lk in line, -1 if it is not there
// (or lk is "").
func linePlace(line []*mvccpb.KeyValue, lk string) int {
	if lk == "" {
		return -1
	}
	for i, kv := range line {
		if string(kv.Key) == lk {
			return i
		}
	}
	return -1
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
