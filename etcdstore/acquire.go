package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// AcquireOrRecord implements store.Recorder: the key's record if it has
// one, else Acquire; one transaction.
func (s *Store) AcquireOrRecord(ctx context.Context, l store.Lease) (store.Grant, []byte, error) {
	return s.acquire(ctx, l, "", true)
}

// acquire is one transaction (and, on a refusal, a read of the holder's
// lease): it takes the key for l.Token when the key is free, nobody stands
// in its line but waiter at its head, and no cancel marker stands for the
// token or the waiter. withRecord answers with the key's record instead
// when there is one. A waiter that is turned away joins the line, once,
// and watches the one ahead of it.
func (s *Store) acquire(ctx context.Context, l store.Lease, waiter string, withRecord bool) (store.Grant, []byte, error) {
	ctx, done := s.call(ctx)
	defer done()
	start := time.Now()
	if waiter != "" {
		if err := s.lines.alive(waiter, start); err != nil {
			return store.Grant{}, nil, err
		}
	}
	// The waiter's place in line as the attempt starts: if the attempt
	// finds it gone because its lease ended, the wait is over.
	placeRev, placeLease := s.lines.place(waiter, l.Key)
	for retried := false; ; retried = true {
		var g store.Grant
		var rec []byte
		var err error
		var ls, wl *lease
		claimed := false
		if rev := s.lines.rev(waiter, l.Key); rev > 0 && !retried {
			// In line: the lock is taken by a read (see head.go), and
			// needs no lease of its own.
			g, rec, claimed, err = s.claimHead(ctx, l, waiter, withRecord, rev, start)
		}
		if !claimed && placeRev > 0 && s.placeLost(ctx, placeLease) {
			// Rejoining now would put the waiter at the back, on a new
			// lease, as if it had never lost its place.
			s.lines.done(waiter)
			return store.Grant{}, nil, fmt.Errorf("%w: the waiter's place in line went with it", ErrLeaseExpired)
		}
		if !claimed {
			if ls, err = s.leases.current(ctx, l.TTL); err != nil {
				return store.Grant{}, nil, err
			}
			if waiter != "" {
				if wl, err = s.lineLeases.current(ctx, lineTTL(l.TTL)); err != nil {
					return store.Grant{}, nil, err
				}
			}
			g, rec, err = s.acquireOn(ctx, l, waiter, withRecord, ls, wl, start)
		}
		if !retried && errors.Is(err, rpctypes.ErrLeaseNotFound) {
			// etcd expired (or was told to revoke) a lease before our clock
			// said it could: the transaction took nothing. Ask which, and
			// take a new one.
			for _, x := range []*lease{ls, wl} {
				if x != nil {
					_ = s.leases.keepAlive(ctx, x, forceRenewal)
				}
			}
			if waiter != "" {
				// Its place in line, if any, went with the lease.
				if err := s.lines.alive(waiter, time.Now()); err != nil {
					return store.Grant{}, nil, err
				}
			}
			continue
		}
		if err != nil && waiter != "" && !errors.Is(err, store.ErrNotObtained) && !errors.Is(err, ErrLeaseExpired) && ctx.Err() == nil && s.c.Ctx().Err() == nil {
			// A waiter keeps its place through a failed attempt (a leader
			// change, say) once the attempt is known to take nothing: it
			// is cancelled here, as the Locker would, and the waiter told
			// to wait on. Lines are what a leader change must not break.
			if s.voidAttempt(ctx, l) {
				return store.Grant{}, nil, &store.NotObtainedError{}
			}
		}
		if err != nil && !errors.Is(err, store.ErrNotObtained) {
			return store.Grant{}, nil, s.failure("acquire", err)
		}
		if rev, _ := s.lines.place(waiter, l.Key); errors.Is(err, store.ErrNotObtained) && placeRev > 0 && rev != placeRev && s.placeLost(ctx, placeLease) {
			// The attempt was on its way as the lease ran out, and joined
			// the line anew: take that key out, and stop.
			if w := s.lines.take(waiter); w != nil {
				s.lines.orphaned(waiter, w)
			}
			return store.Grant{}, nil, fmt.Errorf("%w: the waiter's place in line went with it", ErrLeaseExpired)
		}
		return g, rec, err
	}
}

// placeLost reports whether l, the lease a waiter stood in line on, may
// have ended: by our clock, or etcd says so. Asked only when the waiter's
// place is found gone, so the question costs nothing on the usual path.
func (s *Store) placeLost(ctx context.Context, l *lease) bool {
	if l == nil {
		return false
	}
	if l.isDead(time.Now()) {
		return true
	}
	return errors.Is(s.lineLeases.keepAlive(ctx, l, forceRenewal), ErrLeaseExpired)
}

// voidAttempt cancels the attempt of l whose outcome is unknown, trying
// for a few seconds at most (an election takes about one), and reports
// whether it is now known to hold nothing.
func (s *Store) voidAttempt(ctx context.Context, l store.Lease) bool {
	deadline := time.Now().Add(voidPatience)
	for {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		err := s.Cancel(cctx, l)
		cancel()
		if err == nil || errors.Is(err, store.ErrNotHeld) {
			return true
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// voidPatience bounds voidAttempt.
const voidPatience = 3 * time.Second

// leaseReadTimeout bounds the read of a holder's lease that a refused
// acquire makes to say how long the holder's lease runs.
const leaseReadTimeout = 250 * time.Millisecond

// lineTTL is the lease of a waiter's line key: short, since the head of
// the line holds the lock under it (head.go), so that a waiter whose
// process died keeps the key from others no longer than this; its store
// keeps it alive meanwhile, and the holder's watchdog once it holds.
func lineTTL(ttl time.Duration) time.Duration { return min(ttl, LineTTL) }

// LineTTL is the longest lease of a waiter's line key: etcd's shortest
// lease with its default election timeout (1.5 of 1s, in whole seconds).
const LineTTL = 2 * time.Second

// forceRenewal makes keepAlive renew however fresh the lease is.
const forceRenewal = time.Duration(1<<63 - 1)

func (s *Store) acquireOn(ctx context.Context, l store.Lease, waiter string, withRecord bool, ls, wl *lease, start time.Time) (store.Grant, []byte, error) {
	key, lp := l.Key, linePrefix(l.Key)
	free := []clientv3.Cmp{
		clientv3.Compare(clientv3.CreateRevision(key), "=", 0),
		clientv3.Compare(clientv3.CreateRevision(markerKey(key, l.Token)), "=", 0),
	}
	var lk string
	if waiter != "" {
		lk = lineKey(key, waiter)
		if wm := markerKey(key, handedOverToken(waiter)); wm != markerKey(key, l.Token) {
			free = append(free, clientv3.Compare(clientv3.CreateRevision(wm), "=", 0))
		}
	}
	markers := free[1:]
	take := []clientv3.Op{clientv3.OpPut(key, l.Token, clientv3.WithLease(ls.id))}
	refused := []clientv3.Op{clientv3.OpGet(key)}
	cond := append([]clientv3.Cmp(nil), free...)
	if rev := s.lines.rev(waiter, key); rev > 0 {
		// In line already: take it only at the line's head.
		cond = append(cond,
			clientv3.Compare(clientv3.CreateRevision(lk), "=", rev),
			clientv3.Compare(clientv3.CreateRevision(lp), ">", rev-1).WithPrefix())
	} else {
		cond = append(cond, clientv3.Compare(clientv3.CreateRevision(lp), "=", 0).WithPrefix())
	}
	if waiter != "" {
		take = append(take, clientv3.OpDelete(lk))
		join := append([]clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(lk), "=", 0)}, markers...)
		refused = append(refused,
			clientv3.OpTxn(join, []clientv3.Op{clientv3.OpPut(lk, "", clientv3.WithLease(wl.id))}, nil),
			clientv3.OpGet(lp, clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend)))
	}
	inner := clientv3.OpTxn(cond, take, refused)

	var r *clientv3.TxnResponse
	var err error
	if withRecord {
		rk := recordKey(key)
		r, err = s.c.Txn(reqCtx(ctx)).
			If(clientv3.Compare(clientv3.CreateRevision(rk), "=", 0)).
			Then(inner).
			Else(clientv3.OpGet(rk)).
			Commit()
		if err != nil {
			return store.Grant{}, nil, err
		}
		if !r.Succeeded {
			kvs := r.Responses[0].GetResponseRange().Kvs
			if len(kvs) == 0 {
				return store.Grant{}, nil, errors.New("etcdstore: the record vanished inside a transaction")
			}
			rec, live := decodeRecord(kvs[0].Value, time.Now())
			if live {
				return store.Grant{}, rec, nil
			}
			// Past its retention, its lease not yet run out: drop it, if
			// it is still that one, and try again.
			if _, err := s.c.Txn(reqCtx(ctx)).
				If(clientv3.Compare(clientv3.ModRevision(rk), "=", kvs[0].ModRevision)).
				Then(clientv3.OpDelete(rk)).
				Commit(); err != nil {
				return store.Grant{}, nil, err
			}
			return s.acquireOn(ctx, l, waiter, withRecord, ls, wl, start)
		}
	} else {
		r, err = s.c.Txn(reqCtx(ctx)).If(cond...).Then(take...).Else(refused...).Commit()
		if err != nil {
			return store.Grant{}, nil, err
		}
	}
	rev := r.Header.Revision
	succeeded, resps := r.Succeeded, r.Responses
	if withRecord {
		t := r.Responses[0].GetResponseTxn()
		succeeded, resps = t.Succeeded, t.Responses
	}
	if succeeded {
		s.held.add(l.Token, key, rev, ls, l.TTL, start, false)
		if waiter != "" {
			s.lines.done(waiter)
		}
		return store.Grant{Fence: uint64(rev), Validity: ls.validity(l.TTL, start)}, nil, nil
	}

	var holder *mvccpb.KeyValue
	if kvs := resps[0].GetResponseRange().Kvs; len(kvs) > 0 {
		holder = kvs[0]
	}
	if waiter != "" {
		s.lines.queued(waiter, key, lk, holder, resps[2].GetResponseRange().Kvs, rev)
	}
	return store.Grant{}, nil, s.refusal(ctx, holder)
}

// refusal is the error of an acquire turned away while holder (nil: the
// head of the line, or nobody) holds the key.
func (s *Store) refusal(ctx context.Context, holder *mvccpb.KeyValue) error {
	taken := &store.NotObtainedError{}
	if holder != nil {
		// Best effort, and brief: a holder whose lease cannot be read is
		// still one. (etcd 3.4 forwards the read to the leader over its
		// peer link, which a partition may have cut.)
		lctx, cancel := context.WithTimeout(ctx, leaseReadTimeout)
		if left, err := s.leaseLeft(lctx, clientv3.LeaseID(holder.Lease)); err == nil {
			taken.Remaining = left
		}
		cancel()
	}
	return taken
}
