package core

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNotReplicated means an acquire took the lock on the master but fewer
// replicas than WithReplicaAcks asks for confirmed it in time, so the lock
// was released again. The Locker reports it as ErrUnavailable: nobody else
// holds the lock (so not ErrNotObtained, which would send callers waiting
// for a holder that does not exist, and an HTTP 409 for a duplicate that
// does not exist); the store just cannot make a lock durable right now.
var ErrNotReplicated = errors.New("reqlock: lock not confirmed by enough replicas")

// replicaAcks is the WithReplicaAcks setting.
type replicaAcks struct {
	n       int
	timeout time.Duration
	args    []any // "wait", n, timeout in ms: boxed once
}

// WithReplicaAcks returns a store over the same client whose acquires also
// wait for n replicas to acknowledge the lock, for at most timeout (Redis
// WAIT), and treat a lock fewer replicas confirmed as not obtained: it is
// released and the error is ErrNotReplicated.
//
// That closes most of the gap asynchronous replication leaves under Sentinel
// (or Cluster replicas): without it a failover right after an acquire can
// promote a replica that never saw the lock, and hand it to a second client.
// WAIT is sent in the same pipeline as the acquire script, on the same
// connection, so the acquire stays one round trip; it lasts as long as the
// slowest replica needs, timeout at most. Renewals are not waited for: a
// replica may trail the master by one renewal, which the next renewal, a
// third of a lease later, repairs. A replica that is promoted before it
// caught up with a release is harmless: the lock just expires there.
//
// It panics unless n > 0 and timeout > 0 (WAIT 0 would block forever).
func (s *RedisStore) WithReplicaAcks(n int, timeout time.Duration) *RedisStore {
	if n <= 0 || timeout <= 0 {
		panic(fmt.Sprintf("reqlock: WithReplicaAcks(%d, %v): both must be positive", n, timeout))
	}
	ms := max(timeout.Milliseconds(), 1)
	return &RedisStore{c: s.c, d: s.d, acks: &replicaAcks{n: n, timeout: timeout, args: []any{"wait", n, ms}}}
}

// acquireAcked is Acquire followed by WAIT, pipelined: one round trip.
func (s *RedisStore) acquireAcked(ctx context.Context, l Lease) (Grant, error) {
	v, acks, err := s.evalThenWait(ctx, l)
	if err != nil {
		return Grant{}, err
	}
	if v <= 0 {
		return Grant{}, &NotObtainedError{Remaining: time.Duration(-v) * time.Millisecond}
	}
	if acks < int64(s.acks.n) {
		_ = s.Release(ctx, l.Key, l.Token) // if this fails, the Locker's cleanup retries it
		return Grant{}, fmt.Errorf("%w: %d of %d replicas acknowledged within %v", ErrNotReplicated, acks, s.acks.n, s.acks.timeout)
	}
	return Grant{Fence: uint64(v), Validity: validity(l.TTL)}, nil
}

// evalThenWait pipelines the acquire script and WAIT on one connection of the
// server that owns the lock: WAIT counts the writes of its own connection. On a
// Cluster that is the key's master, asked directly.
func (s *RedisStore) evalThenWait(ctx context.Context, l Lease) (result, acks int64, err error) {
	ttl, fttl := s.leaseArgs(l.TTL)
	args := append(evalArgs(5), l.Key, l.Key+fenceSuffix, l.Token, ttl, fttl)
	var c redis.Cmdable = s.c
	if cc, ok := s.c.(*redis.ClusterClient); ok {
		if c, err = cc.MasterForKey(ctx, l.Key); err != nil {
			return 0, 0, err
		}
	}
	send := func(verb, script any) (*redis.Cmd, *redis.Cmd) {
		args[0], args[1], args[2] = verb, script, acquireCall.numKeys
		var eval, wait *redis.Cmd
		_, _ = c.Pipelined(ctx, func(p redis.Pipeliner) error {
			eval = p.Do(ctx, args...)
			wait = p.Do(ctx, s.acks.args...)
			return nil
		})
		return eval, wait
	}
	eval, wait := send("evalsha", acquireCall.sha)
	if replyIs(eval.Err(), "NOSCRIPT") { // first use, restart, failover
		eval, wait = send("eval", acquireCall.source)
	}
	if result, err = eval.Int64(); err != nil {
		if cc, ok := s.c.(*redis.ClusterClient); ok && (replyIs(err, "MOVED") || replyIs(err, "ASK")) {
			cc.ReloadState(ctx) // the slot moved; the next attempt asks the new owner
		}
		return 0, 0, err
	}
	if acks, err = wait.Int64(); err != nil {
		if result > 0 {
			_ = s.Release(ctx, l.Key, l.Token)
		}
		return 0, 0, err
	}
	return result, acks, nil
}
