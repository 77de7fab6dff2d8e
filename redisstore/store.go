package redisstore

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/redisstore/internal/node"
)

// ErrNotReplicated means too few replicas acknowledged a lock in time (see
// WithReplicaAcks); the lock was given back.
var ErrNotReplicated = node.ErrNotReplicated

// Store keeps locks in Redis: a single node, a Cluster, or a Sentinel
// failover client, through redis.UniversalClient. Each operation is one
// script, one round trip; the scripts are in internal/node/lua.
//
// Create the client with ContextTimeoutEnabled: true. Without it go-redis
// ignores context deadlines on the socket and a hung Redis holds a caller for
// the client's ReadTimeout (3s by default) instead of the caller's deadline.
type Store struct {
	n    *node.Node
	dial *dialWatch
	c    redis.UniversalClient // for the permits (semaphore.go)
}

// New returns a store over c. It panics if c is nil, and logs a warning (to
// slog.Default, once per client) if c was created without
// ContextTimeoutEnabled.
//
// A failure to reach Redis carries the client's last failed dial
// (connection refused, say) besides the deadline that ended the call: New
// adds a dial hook to c for that, once per client.
func New(c redis.UniversalClient) *Store {
	n := node.New(c)
	return &Store{n: n, dial: watchDials(c), c: c}
}

// WithReplicaAcks returns a store over the same client whose acquires also
// wait for n replicas to acknowledge the lock, for at most timeout (Redis
// WAIT, in the acquire's own pipeline: still one round trip), and treat a
// lock fewer replicas confirmed as not obtained: it is given back and the
// error is ErrNotReplicated. It closes most of the gap asynchronous
// replication leaves under Sentinel or Cluster replicas, where a failover
// right after an acquire can promote a replica that never saw the lock.
//
// It panics unless n > 0 and timeout > 0, and on a Ring, which shards keys
// over independent servers.
func (s *Store) WithReplicaAcks(n int, timeout time.Duration) *Store {
	return &Store{n: s.n.WithReplicaAcks(n, timeout), dial: s.dial, c: s.c}
}

// Acquire implements store.Store: SET NX PX plus the fence, or the holder's
// PTTL.
func (s *Store) Acquire(ctx context.Context, l store.Lease) (store.Grant, error) {
	g, err := s.n.Acquire(ctx, l)
	return g, s.dial.explain(err)
}

// Extend implements store.Store: every lease in one pipeline.
func (s *Store) Extend(ctx context.Context, leases []store.Lease) []store.Renewal {
	rs := s.n.Extend(ctx, leases)
	for i := range rs {
		rs[i].Err = s.dial.explain(rs[i].Err)
	}
	return rs
}

// Release implements store.Store: compare the token, then hand the lock to
// the next waiter in line, or DEL.
func (s *Store) Release(ctx context.Context, key, token string) error {
	return s.dial.explain(s.n.Release(ctx, key, token))
}

// TTL implements store.Store.
func (s *Store) TTL(ctx context.Context, key, token string) (time.Duration, error) {
	d, err := s.n.TTL(ctx, key, token)
	return d, s.dial.explain(err)
}

// Cancel implements store.Canceler: the lock is deleted if l.Token holds
// it, and a marker left for the token makes an acquire with it that is
// still on its way take nothing when it lands.
func (s *Store) Cancel(ctx context.Context, l store.Lease) error {
	return s.dial.explain(s.n.Cancel(ctx, l))
}

// AcquireOrRecord implements store.Recorder: the key's record, if it has
// one, else Acquire; one round trip.
func (s *Store) AcquireOrRecord(ctx context.Context, l store.Lease) (store.Grant, []byte, error) {
	g, rec, err := s.n.AcquireOrRecord(ctx, l)
	return g, rec, s.dial.explain(err)
}

// ReleaseRecording implements store.Recorder: the record is written and the
// lock released in one script, only if token still holds the lock.
func (s *Store) ReleaseRecording(ctx context.Context, key, token string, record []byte, retention time.Duration) error {
	return s.dial.explain(s.n.ReleaseRecording(ctx, key, token, record, retention))
}

// AcquireQueued implements store.Waker.
func (s *Store) AcquireQueued(ctx context.Context, l store.Lease, waiter string, withRecord bool) (store.Grant, []byte, error) {
	g, rec, err := s.n.AcquireQueued(ctx, l, waiter, withRecord)
	return g, rec, s.dial.explain(err)
}

// Leave implements store.Waker.
func (s *Store) Leave(ctx context.Context, key, waiter string) error {
	return s.dial.explain(s.n.Leave(ctx, key, waiter))
}

// Subscribe implements store.Waker: one pub/sub connection per Locker,
// opened on the first Hold and closed a moment after the last holder let go.
func (s *Store) Subscribe(prefix, instance string, wake func(key, waiter string)) store.Subscription {
	return s.n.Subscribe(prefix, instance, wake)
}

// SubscribeGrants implements store.Granter: Subscribe, with the fence of a
// lock a release handed to a waiter.
func (s *Store) SubscribeGrants(prefix, instance string, grant func(key, waiter string, fence uint64)) store.Subscription {
	return s.n.SubscribeGrants(prefix, instance, grant)
}

// Inspect implements store.Inspector: one read-only script.
func (s *Store) Inspect(ctx context.Context, key string) (store.Holding, error) {
	h, err := s.n.Inspect(ctx, key)
	return h, s.dial.explain(err)
}

// Kind implements store.Kinder: "redis", or "redis_cluster" over a
// *redis.ClusterClient.
func (s *Store) Kind() string { return s.n.Kind() }

// TellsLapses implements store.LapseTeller: a Redis holder learns of a
// lapsed lease from its own clock.
func (s *Store) TellsLapses() bool { return false }

// RecordsDurable implements store.Durability: CONFIG GET appendonly and
// save. An error when CONFIG is renamed or refused, as on some managed
// services.
func (s *Store) RecordsDurable(ctx context.Context) (durable bool, detail string, err error) {
	return s.n.RecordsDurable(ctx)
}
