package etcdstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/outage"
)

// Store keeps locks in etcd. It implements store.Store and every optional
// part of the contract: Canceler, Recorder, Waker, Inspector. Make one per
// client and share it: its locks share its leases (see lease.go), so one
// keep-alive renews them all.
type Store struct {
	c *clientv3.Client

	markerTTL time.Duration

	leases     leases        // the locks'
	lineLeases leases        // the waiters'
	pools      expiringPools // leases of records and cancel markers
	held       heldLocks     // token → lock, for Guard
	lines      lines         // this process's waiters and their watches
	// permitLeases is token → the lease of its permit (semaphore.go), so
	// that a release revokes it.
	permitLeases sync.Map
}

// Option configures a Store.
type Option func(*Store)

// WithMarkerTTL sets how long a cancelled acquire is kept from taking the
// lock should it land late (default one minute, and never less than a
// second).
func WithMarkerTTL(d time.Duration) Option {
	return func(s *Store) { s.markerTTL = max(d, time.Second) }
}

// DefaultMarkerTTL is how long a cancel marker lives unless WithMarkerTTL
// says otherwise: an acquire that reaches etcd later than this after its
// caller gave up may still take the lock.
const DefaultMarkerTTL = time.Minute

// New returns a Store over c. It panics if c is nil.
func New(c *clientv3.Client, opts ...Option) *Store {
	if c == nil {
		panic("etcdstore: New: nil client")
	}
	s := &Store{c: c, markerTTL: DefaultMarkerTTL}
	for _, o := range opts {
		o(s)
	}
	s.leases.init(s, false)
	s.lineLeases.init(s, true)
	s.pools.init(s)
	s.lines.init(s)
	s.held.s = s
	return s
}

// Kind names the store in telemetry.
func (s *Store) Kind() string { return "etcd" }

// TellsLapses reports false: a holder learns of a lost lease from its own
// clock, not from the store.
func (s *Store) TellsLapses() bool { return false }

// Key layout, all derived from the lock's key K (the Locker's prefix and
// {hash}):
//
//	K                the lock: value the holder's token, on the holder's
//	                 lease; its create revision is the fence
//	K/line/<waiter>  a waiter in line, on its store's lease; the line is in
//	                 create-revision order
//	K/record         the record, on a lease that ends with its retention
//	K/cancel/<hash>  a cancel marker: an acquire with that token (or that
//	                 waiter's) takes nothing while it lives
func lineKey(key, waiter string) string { return key + "/line/" + waiter }
func linePrefix(key string) string      { return key + "/line/" }
func recordKey(key string) string       { return key + "/record" }
func markerKey(key, token string) string {
	h := sha256.Sum256([]byte(token))
	return key + "/cancel/" + hex.EncodeToString(h[:12])
}

// reqCtx makes a request fail at once, rather than hang, on a member that
// has lost its leader (a partition, a majority down).
func reqCtx(ctx context.Context) context.Context { return clientv3.WithRequireLeader(ctx) }

// call is the context of one request: ctx, also ended when the client is
// closed (the client's own retries wait on the request's context alone),
// and failing at once on a member without a leader.
func (s *Store) call(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(reqCtx(ctx))
	stop := context.AfterFunc(s.c.Ctx(), cancel)
	return ctx, func() { stop(); cancel() }
}

// failure wraps an error of the client: ErrStoreClosed once it was closed.
// An outage says which member, at which address, and whether it refused
// connections or went silent (outage.Explain): etcd's client says
// "context deadline exceeded" either way, retrying the dial within.
func (s *Store) failure(op string, err error) error {
	if s.c.Ctx().Err() != nil {
		return fmt.Errorf("etcdstore: %s: %w: %w", op, store.ErrStoreClosed, err)
	}
	if eps := s.c.Endpoints(); len(eps) > 0 {
		switch status.Code(err) {
		case codes.DeadlineExceeded:
			if !errors.Is(err, context.DeadlineExceeded) {
				err = fmt.Errorf("%w: %w", err, context.DeadlineExceeded)
			}
		case codes.Unavailable:
			err = fmt.Errorf("%w (%w)", err, outage.ErrConnLost)
		}
		name := "etcd"
		if len(eps) > 1 {
			name = fmt.Sprintf("etcd (first of %d endpoints)", len(eps))
		}
		err = outage.Explain(name, hostPort(eps[0]), err)
	}
	return fmt.Errorf("etcdstore: %s: %w", op, err)
}

// hostPort is an endpoint without its scheme: "http://10.0.0.1:2379" is
// "10.0.0.1:2379".
func hostPort(endpoint string) string {
	if _, rest, ok := strings.Cut(endpoint, "://"); ok {
		return strings.TrimSuffix(rest, "/")
	}
	return endpoint
}

// Acquire implements store.Store: one transaction takes the key if it is
// free and nobody stands in its line.
func (s *Store) Acquire(ctx context.Context, l store.Lease) (store.Grant, error) {
	g, _, err := s.acquire(ctx, l, "", false)
	return g, err
}

// Release implements store.Store: one transaction deletes the key if the
// token still holds it. The head of the line watches the key and is woken
// by the deletion.
func (s *Store) Release(ctx context.Context, key, token string) error {
	ctx, done := s.call(ctx)
	defer done()
	cmp, k := s.holds(key, token)
	r, err := s.c.Txn(reqCtx(ctx)).If(cmp).Then(clientv3.OpDelete(k)).Commit()
	if err != nil {
		return s.failure("release", err)
	}
	s.held.forget(token)
	if !r.Succeeded {
		return store.ErrNotHeld
	}
	return nil
}

// TTL implements store.Store: the remaining lease of the key token holds.
func (s *Store) TTL(ctx context.Context, key, token string) (time.Duration, error) {
	ctx, done := s.call(ctx)
	defer done()
	cmp, k := s.holds(key, token)
	r, err := s.c.Txn(reqCtx(ctx)).If(cmp).Then(clientv3.OpGet(k)).Commit()
	if err != nil {
		return 0, s.failure("ttl", err)
	}
	if !r.Succeeded {
		return 0, store.ErrNotHeld
	}
	kvs := r.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 0 {
		return 0, store.ErrNotHeld
	}
	return s.leaseLeft(ctx, clientv3.LeaseID(kvs[0].Lease))
}

// leaseLeft is how long lease id has left: by this store's own reckoning
// when it is one of its own, else as etcd says, to the second.
func (s *Store) leaseLeft(ctx context.Context, id clientv3.LeaseID) (time.Duration, error) {
	if id == clientv3.NoLease {
		return 0, nil
	}
	if left, ok := s.leases.left(id, time.Now()); ok {
		return left, nil
	}
	if left, ok := s.lineLeases.left(id, time.Now()); ok {
		return left, nil
	}
	r, err := s.c.TimeToLive(reqCtx(ctx), id)
	if err != nil {
		return 0, s.failure("ttl", err)
	}
	return time.Duration(max(r.TTL, 0)) * time.Second, nil
}

// ErrLeaseExpired is returned to a waiter whose lease etcd let expire (its
// place in line went with it) and to an acquire on it: it stops waiting.
var ErrLeaseExpired = errors.New("etcdstore: lease expired")
