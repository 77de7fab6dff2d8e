package node

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/reqlock/reqlock/core/store"
)

// ErrNotReplicated means an acquire took the lock on the master but fewer
// replicas than WithReplicaAcks asks for confirmed it in time, so the lock
// was released again. The Locker reports it as ErrUnavailable: nobody else
// holds the lock (so not store.ErrNotObtained, which would send callers waiting
// for a holder that does not exist, and an HTTP 409 for a duplicate that
// does not exist); the store just cannot make a lock durable right now.
var ErrNotReplicated = errors.New("reqlock: lock not confirmed by enough replicas")

// replicaAcks is the WithReplicaAcks setting.
type replicaAcks struct {
	n           int
	timeout     time.Duration
	readTimeout time.Duration // the client's; <= 0: none

	// loaded holds the addresses of the servers known to have the acquire
	// script, so that EVALSHA will do there. Until then the script goes
	// whole, so that no NOSCRIPT makes the pipeline's WAIT run for nothing.
	loaded sync.Map // node address → struct{}

	// nodes are a Cluster's node clients by address, for following a
	// redirect without asking the cluster for its slot map each time.
	nodes sync.Map // normalised address → *redis.Client
}

// waitGranularity is how late Redis may end a WAIT: it looks at blocked
// clients' timeouts on its timer, every 100 ms at the default hz of 10.
const waitGranularity = 110 * time.Millisecond

// WithReplicaAcks returns a store over the same client whose acquires also
// wait for n replicas to acknowledge the lock, for at most timeout (Redis
// WAIT), and treat a lock fewer replicas confirmed as not obtained: it is
// released and the error is ErrNotReplicated.
//
// That closes most of the gap asynchronous replication leaves under Sentinel
// (or Cluster replicas): without it a failover right after an acquire can
// promote a replica that never saw the lock, and hand it to a second client.
// WAIT is sent in the same pipeline as the acquire script, on the same
// connection, so the acquire stays one round trip; it returns once n
// replicas have the lock, after timeout at most. Renewals are not waited
// for: a replica may trail the master by one renewal, which the next
// renewal, a third of a lease later, repairs. A replica that is promoted
// before it caught up with a release is harmless: the lock just expires
// there.
//
// WAIT is cut shorter than timeout where it must be, so that Redis answers
// before the caller's context ends and before the client's ReadTimeout:
// a read that timed out would cost the connection, and with retries on,
// the store would send the acquire again. Redis ends a WAIT up to 100 ms late
// (at the default hz), so a deadline shorter than that leaves WAIT no time.
// While fewer than n replicas are connected, an attempt that finds the lock
// taken waits out that time too: WAIT cannot be left out of the one round
// trip for it.
//
// It panics unless n > 0 and timeout > 0 (WAIT 0 would block forever), and
// on a Ring, which shards keys over independent servers.
func (s *Node) WithReplicaAcks(n int, timeout time.Duration) *Node {
	if n <= 0 || timeout <= 0 {
		panic(fmt.Sprintf("reqlock: WithReplicaAcks(%d, %v): both must be positive", n, timeout))
	}
	acks := &replicaAcks{n: n, timeout: timeout}
	switch c := s.c.(type) {
	case *redis.Ring:
		panic("reqlock: WithReplicaAcks: a Ring shards keys over independent servers; use a Client, a FailoverClient or a ClusterClient")
	case *redis.Client:
		acks.readTimeout = c.Options().ReadTimeout
	case *redis.ClusterClient:
		acks.readTimeout = c.Options().ReadTimeout
	}
	return &Node{c: s.c, d: s.d, acks: acks, resends: s.resends, resend: s.resend, resent: s.resent, markAlways: s.markAlways}
}

// waitArgs is the WAIT command for one acquire: timeout, or less when the
// context's deadline or the client's read timeout comes first, leaving room
// for Redis's lateness in ending it and a tenth for the round trip.
func (a *replicaAcks) waitArgs(ctx context.Context) []any {
	within := func(limit time.Duration) time.Duration { return limit - limit/10 - waitGranularity }
	d := a.timeout
	if dl, ok := ctx.Deadline(); ok {
		d = min(d, within(time.Until(dl)))
	}
	if a.readTimeout > 0 {
		d = min(d, within(a.readTimeout))
	}
	return []any{"wait", a.n, max(d.Milliseconds(), 1)}
}

// acquireAcked is Acquire followed by WAIT, pipelined: one round trip.
// resent: a copy may still be on its way (see sendAcquire).
func (s *Node) acquireAcked(ctx context.Context, l store.Lease, withRecord bool) (a acquireAnswer, resent bool, err error) {
	a, acks, resent, err := s.evalThenWait(ctx, l, withRecord)
	if err != nil || a.fence == 0 {
		return a, resent, err
	}
	if acks < int64(s.acks.n) {
		giveBack(ctx, s, l)
		return acquireAnswer{}, resent, fmt.Errorf("%w: %d of %d replicas acknowledged in time", ErrNotReplicated, acks, s.acks.n)
	}
	return a, resent, nil
}

// evalThenWait pipelines the acquire script and WAIT on one connection of the
// server that owns the lock: WAIT counts the writes of its own connection. On a
// Cluster that is the key's master, asked directly, and where the slot has
// moved (MOVED) or is moving (ASK), the node the redirect names, for as many
// redirects as the cluster client's MaxRedirects allows. resent: a copy may
// still be on its way (see sendAckedResending).
func (s *Node) evalThenWait(ctx context.Context, l store.Lease, withRecord bool) (a acquireAnswer, acks int64, resent bool, err error) {
	ttl, fttl := s.leaseArgs(l.TTL)
	call, args := plainAcquire(l, ttl, fttl, nil, withRecord)
	cc, _ := s.c.(*redis.ClusterClient)
	var node ackNode = s.c
	hops := 0 // redirects the cluster client would follow
	if cc != nil {
		if node, err = cc.MasterForKey(ctx, l.Key); err != nil {
			return a, 0, false, err
		}
		hops = cc.Options().MaxRedirects
	}
	// A client of a type the store cannot inspect may resend the pipeline
	// unseen (see sendAcquire).
	resent = s.markAlways
	asking := false
	var redirect error // the last MOVED or ASK followed
	var evalCmd, waitCmd *redis.Cmd
	for lookedUp := false; ; hops-- {
		var again bool
		evalCmd, waitCmd, again = s.sendAckedResending(ctx, node, asking, call, args, l.Token)
		resent = resent || again
		err = evalCmd.Err()
		switch {
		case redirect != nil && !lookedUp && errors.Is(err, redis.ErrClosed):
			// A node client kept from an earlier redirect that the cluster
			// client has closed since: look the node up afresh, once, which
			// is no further redirect.
			s.acks.forgetNode(node)
			lookedUp = true
			hops++
		case replyIs(err, "MOVED") || replyIs(err, "ASK"):
			redirect = err // the script did not run
		default:
			hops = 0
		}
		if hops <= 0 {
			break
		}
		// Follow the redirect: a slot map two moves behind takes a MOVED and
		// then an ASK.
		target := s.acks.redirectTarget(ctx, cc, redirect)
		if target == nil {
			return a, 0, resent, err
		}
		node, asking = target, replyIs(redirect, "ASK")
	}
	if err != nil {
		// Either an answer saying the script did not run, or no answer, in
		// which case the Locker takes back what the token may hold.
		return a, 0, resent, err
	}
	if a, err = acquireReply(evalCmd); err != nil {
		return acquireAnswer{}, 0, resent, err
	}
	if a.fence == 0 {
		// Taken (the holder's lease) or done (the record): nothing was
		// written, so there is nothing for WAIT to count.
		return a, 0, resent, nil
	}
	if acks, err = waitCmd.Int64(); err != nil {
		// The script ran and only WAIT failed: give back the lock it took.
		giveBack(ctx, s, l)
		return acquireAnswer{}, 0, resent, err
	}
	return a, acks, resent, nil
}

// sendAckedResending is sendAcked, sent again as the client's retry
// setting asks: the acquire goes as a onceCmd, which keeps go-redis from
// resending the pipeline on its own, so that the store knows when a copy
// may still be on its way (resent; the token is then noted), as for an
// acquire without WAIT (sendAcquire).
func (s *Node) sendAckedResending(ctx context.Context, node ackNode, asking bool, call scriptCall, args []any, token string) (evalCmd, waitCmd *redis.Cmd, resent bool) {
	for attempt := 1; ; attempt++ {
		evalCmd, waitCmd = s.sendAcked(ctx, node, asking, call, args)
		err := evalCmd.Err()
		if err == nil || attempt > s.resend.max {
			return evalCmd, waitCmd, resent
		}
		again, inFlight := resendKind(ctx, err)
		if !again {
			return evalCmd, waitCmd, resent
		}
		if inFlight && !resent {
			s.resent.note(token)
			resent = true
		}
		if !s.pause(ctx, attempt) {
			return evalCmd, waitCmd, resent
		}
	}
}

// ackNode is where an acked acquire goes: the client, or one Cluster node.
type ackNode interface {
	doer
	Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
}

// sendAcked sends the acquire, EVALSHA where node is known to have the
// script and EVAL elsewhere, with WAIT behind it on the same connection;
// ASKING first for a slot being imported there. A NOSCRIPT (a restart, a
// failover) sends both again, the script whole: WAIT must follow the write
// on its own connection, which a second pipeline may not get. While
// replicas are missing, the first WAIT then takes its time for nothing;
// that needs both at once, and is rare.
func (s *Node) sendAcked(ctx context.Context, node ackNode, asking bool, call scriptCall, args []any) (evalCmd, waitCmd *redis.Cmd) {
	addr := nodeAddr(node)
	_, loaded := s.acks.loaded.Load(addr)
	for {
		args[0], args[1], args[2] = "eval", call.source, call.numKeys
		if loaded {
			args[0], args[1] = "evalsha", call.sha
		}
		_, _ = node.Pipelined(ctx, func(p redis.Pipeliner) error {
			if asking {
				p.Do(ctx, "asking")
			}
			evalCmd = redis.NewCmd(ctx, args...)
			_ = p.Process(ctx, cmder(evalCmd, s.resend.max > 0))
			waitCmd = p.Do(ctx, s.acks.waitArgs(ctx)...)
			return nil
		})
		if !loaded || !replyIs(evalCmd.Err(), "NOSCRIPT") {
			break
		}
		s.acks.loaded.Delete(addr)
		loaded = false
	}
	if evalCmd.Err() == nil {
		s.acks.loaded.Store(addr, struct{}{})
	}
	return evalCmd, waitCmd
}

// nodeAddr names the server behind node, for remembering what it has
// loaded. A FailoverClient's name stays the same across failovers, which
// the NOSCRIPT from a new master repairs.
func nodeAddr(node ackNode) string {
	if c, ok := node.(*redis.Client); ok {
		return c.Options().Addr
	}
	return ""
}

// releaseRecordingAcked runs release_record.lua (args from ReleaseRecording)
// with WAIT behind it on the same connection of the key's master.
func (s *Node) releaseRecordingAcked(ctx context.Context, key string, call scriptCall, args []any) error {
	var node ackNode = s.c
	if cc, ok := s.c.(*redis.ClusterClient); ok {
		m, err := cc.MasterForKey(ctx, key)
		if err != nil {
			return err
		}
		node = m
	}
	// EVAL, not EVALSHA: no NOSCRIPT may come between the script and WAIT.
	args[0], args[1], args[2] = "eval", call.source, call.numKeys
	var evalCmd, waitCmd *redis.Cmd
	_, _ = node.Pipelined(ctx, func(p redis.Pipeliner) error {
		evalCmd = p.Do(ctx, args...)
		waitCmd = p.Do(ctx, s.acks.waitArgs(ctx)...)
		return nil
	})
	n, err := evalCmd.Int64()
	if err != nil {
		return err
	}
	if n == 0 {
		return store.ErrNotHeld
	}
	acks, err := waitCmd.Int64()
	if err != nil {
		return err
	}
	if acks < int64(s.acks.n) {
		return fmt.Errorf("%w: the record: %d of %d replicas acknowledged in time", ErrNotReplicated, acks, s.acks.n)
	}
	return nil
}
