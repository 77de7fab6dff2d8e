package redlock

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/redisstore/internal/node"
)

// DefaultNodeTimeout is how long a Store waits for any one node per
// operation unless WithNodeTimeout says otherwise: 1% of the default 10s
// lease, and long enough to ride out a CPU-throttled container or a GC pause
// on our side, which would otherwise fail every node at once.
const DefaultNodeTimeout = 100 * time.Millisecond

// Store keeps each lock on a majority of N independent Redis masters
// (the Redlock algorithm), so that it survives the loss of up to N/2 of them
// where a single master, or a master and its asynchronous replica, would not.
//
// Every operation goes to all nodes at once, one script and one round trip
// per node, and waits for each at most the node timeout (DefaultNodeTimeout,
// see WithNodeTimeout); a dead or paused node costs that much, not the lease.
// A successful acquire or release answers as soon as a majority agreed, so
// then a slow node costs nothing; the late nodes' calls finish in the
// background, and a grant that answers after the lock's release was sent,
// and that the release did not delete, is taken back. (A node that never
// answers its acquire in time may still run it later; that copy lasts until
// the lease ends, and blocks only that node.)
//
//   - Acquire succeeds when at least N/2+1 nodes took the lock and time is
//     left: the validity it returns is ttl − elapsed − (ttl/100 + 2ms), on
//     this process's monotonic clock, the margin covering clock drift
//     between the nodes and us. The watchdog renews within it and declares
//     the lock lost when it runs out. A failed attempt deletes whatever it
//     took on every node that may hold it.
//   - When a quorum answered and other holders keep it out of reach, the
//     error is a *store.NotObtainedError whose Remaining is how long until enough
//     of their copies expire for a quorum to be free (if not renewed). When
//     fewer than a quorum answered at all, it is a store failure.
//   - Extend needs a quorum too. It answers store.ErrNotHeld when so many nodes say
//     the lock is not ours that a quorum is out of reach; anything short of
//     that is a transient failure, which the watchdog retries until the
//     validity runs out.
//   - Release goes to every node; it is nil when a quorum deleted our lock.
//
// Fence is the largest of the fences the granting nodes handed out. Each
// node's fence is max(its last fence + 1, the acquiring process's clock in
// µs), so on one node fences always grow; any two quorums share a node, so
// the next holder's fence is above the fence that node gave the last holder.
// Yet the last holder's fence may have come from a node the next quorum
// lacks, and then only the clocks order them: the fence grows across
// holders as long as no node loses its counter and no holder's clock ran
// ahead of a later holder's by more than the time between their acquires.
// A node that restarts empty, or a process whose clock is ahead, can make
// the next fence smaller than the last: with Redlock the fence orders holders
// almost always but is NOT a safe fencing token across node failures or
// clock trouble. Where a resource must reject stale writers for certain, use
// one Redis store, whose fences come from one counter, or a store of record
// that issues its own.
//
// Safety needs the "delayed restart" rule: a node that crashed must not
// rejoin before the longest lease has run out (restart it empty after
// max TTL, or run it with AOF fsync always). Otherwise it comes back without
// the locks it had granted, and a second client can build a quorum from it
// and the nodes the first holder did not reach: two holders at once.
//
// Create every client with ContextTimeoutEnabled: true, so that the node
// timeout reaches the socket.
type Store struct {
	nodes       []*node.Node
	names       []string // for errors: "127.0.0.1:6379", or "node 3"
	quorum      int
	nodeTimeout time.Duration
	late        *lateGrants // shared by the copies WithNodeTimeout makes
}

// New returns a store over independent masters: not replicas of
// one another, not nodes of one Cluster. Use an odd number, usually 3 or 5.
// It panics without clients, on a nil client, or on the same client twice
// (which would count one node twice toward the quorum).
func New(clients ...redis.UniversalClient) *Store {
	if len(clients) == 0 {
		panic("reqlock: redlock.New: no clients")
	}
	s := &Store{quorum: len(clients)/2 + 1, nodeTimeout: DefaultNodeTimeout, late: &lateGrants{}}
	for i, c := range clients {
		if slices.Contains(clients[:i], c) {
			panic(fmt.Sprintf("reqlock: redlock.New: client %d is passed twice", i))
		}
		n := node.New(c)
		node.WakeEveryone(n) // no line on the nodes: every release tells every listener
		s.nodes = append(s.nodes, n)
		name := fmt.Sprintf("node %d", i)
		if o, ok := c.(interface{ Options() *redis.Options }); ok {
			name = o.Options().Addr
		}
		s.names = append(s.names, name)
	}
	return s
}

// WithNodeTimeout returns a copy of s that waits at most d for any one node
// per operation (default DefaultNodeTimeout). Keep it small against the
// lease: a lock is valid for the lease minus the time the slowest useful
// answer took. An acquire or extend never waits past the lease's validity
// budget, whatever d is. It panics if d is not positive.
func (s *Store) WithNodeTimeout(d time.Duration) *Store {
	if d <= 0 {
		panic("reqlock: WithNodeTimeout: timeout must be positive")
	}
	c := *s
	c.nodeTimeout = d
	return &c
}

// Quorum is how many nodes must agree: N/2+1.
func (s *Store) Quorum() int { return s.quorum }

// nodeErr labels a node's error with the node. A socket timeout counts as
// context.DeadlineExceeded: go-redis puts the node deadline on the socket,
// and its own i/o timeout may fire before the context's timer does.
func (s *Store) nodeErr(i int, err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w (%w)", s.names[i], context.DeadlineExceeded, err)
	}
	return fmt.Errorf("%s: %w", s.names[i], err)
}

// nodeErrs labels the errors of the failed nodes.
func (s *Store) nodeErrs(failed []int, errOf func(int) error) []error {
	errs := make([]error, len(failed))
	for j, i := range failed {
		errs[j] = s.nodeErr(i, errOf(i))
	}
	return errs
}

// budget is how long an acquire or extend of a lease may take and still be
// worth something, and the node timeout within it.
func (s *Store) budget(ttl time.Duration) (budget, timeout time.Duration) {
	budget = ttl - store.Drift(ttl)
	return budget, max(min(s.nodeTimeout, budget), time.Millisecond)
}

// nodeAcquire is one node's answer to an acquire.
type nodeAcquire struct {
	fence     uint64
	remaining time.Duration // > 0 when someone else holds it there
	taken     bool
	err       error
}

// acquireOn runs the acquire script on one node with our clock for the
// fence (see node.AcquireAbove).
func acquireOn(ctx context.Context, n *node.Node, l store.Lease, clock any, waiter string) nodeAcquire {
	fence, remaining, err := node.AcquireAbove(ctx, n, l, clock, waiter)
	switch {
	case err != nil:
		return nodeAcquire{err: err}
	case fence == 0:
		return nodeAcquire{taken: true, remaining: remaining}
	default:
		return nodeAcquire{fence: fence}
	}
}

// Acquire implements Store: the acquire script on every node at once, one
// round trip each.
func (s *Store) Acquire(ctx context.Context, l store.Lease) (store.Grant, error) {
	return s.acquire(ctx, l, "")
}

// acquire is Acquire for waiter ("" for none).
func (s *Store) acquire(ctx context.Context, l store.Lease, waiter string) (_ store.Grant, err error) {
	if err := ctx.Err(); err != nil {
		return store.Grant{}, err // the calls would outlive ctx: do not start them
	}
	start := time.Now()
	clock := any(strconv.FormatInt(start.UnixMicro(), 10)) // formatted once for all nodes
	budget, timeout := s.budget(l.TTL)
	lg := s.late.track(l.Key, l.Token, len(s.nodes))
	var lines *lineJoins
	if waiter != "" {
		lines = &lineJoins{}
		defer func() { lines.decide(err == nil, s, l.Key, waiter) }()
	}
	answers := fanOutUntil(ctx, s.nodes, timeout,
		func(ctx context.Context, n *node.Node) nodeAcquire {
			a := acquireOn(ctx, n, l, clock, waiter)
			if s.late.acquired(lg, slices.Index(s.nodes, n), a.err == nil && !a.taken) {
				s.takeBack(n, l.Key, l.Token)
			}
			if a.taken && lines != nil {
				lines.joined(n, s, l.Key, waiter)
			}
			return a
		},
		func(err error) nodeAcquire { return nodeAcquire{err: err} },
		func(a nodeAcquire) bool { return a.err == nil && !a.taken }, s.quorum)
	validity := budget - time.Since(start)

	var ok int
	var fence uint64
	var taken []time.Duration
	var failed []int // labelled only if the attempt fails: the success path stays cheap
	for i, a := range answers {
		switch {
		case a.err != nil:
			failed = append(failed, i)
		case a.taken:
			taken = append(taken, a.remaining)
		default:
			ok++
			fence = max(fence, a.fence)
		}
	}
	if ok >= s.quorum && validity > 0 {
		return store.Grant{Fence: fence, Validity: validity}, nil
	}

	// Not enough, or too late: take back our token wherever it may be, and
	// wherever it may still land (a cancel leaves a marker that voids it),
	// also when the caller gave up: that may be why we failed.
	giveBack(ctx, s, l)

	switch {
	case ok >= s.quorum:
		return store.Grant{}, fmt.Errorf("reqlock: redlock acquire: quorum reached after %v, past the lease's validity", time.Since(start).Round(time.Millisecond))
	case len(taken) > 0 && ok+len(taken) >= s.quorum:
		// A quorum answered and others hold enough of it to keep us out.
		// With fewer answers the store is failing, whatever the few said:
		// callers then see ErrUnavailable (503, or fail-open if they chose
		// it, as they would with a single Redis down) instead of waiting on a
		// lock that nobody can take until the nodes are back.
		return store.Grant{}, &store.NotObtainedError{Remaining: freeIn(taken, s.quorum-ok)}
	default:
		return store.Grant{}, &quorumError{op: "acquire", ok: ok, need: s.quorum, nodes: len(s.nodes),
			errs: s.nodeErrs(failed, func(i int) error { return answers[i].err })}
	}
}

// freeIn is how long until need more nodes are free, given the remaining
// leases of the copies others hold: the need-th shortest. When even all of
// them would not be enough (nodes are down), the longest; 0 if unknown.
func freeIn(remaining []time.Duration, need int) time.Duration {
	remaining = slices.DeleteFunc(remaining, func(d time.Duration) bool { return d <= 0 })
	if len(remaining) == 0 {
		return 0
	}
	slices.Sort(remaining)
	return remaining[min(max(need, 1), len(remaining))-1]
}

// Extend implements Store: every node renews all the leases in one pipeline,
// one round trip per node; a lease is renewed when a quorum renewed it.
func (s *Store) Extend(ctx context.Context, leases []store.Lease) []store.Renewal {
	start := time.Now()
	shortest := leases[0].TTL
	for _, l := range leases[1:] {
		shortest = min(shortest, l.TTL)
	}
	_, timeout := s.budget(shortest)
	answers := fanOut(ctx, s.nodes, timeout,
		func(ctx context.Context, n *node.Node) []store.Renewal { return n.Extend(ctx, leases) },
		func(err error) []store.Renewal {
			out := make([]store.Renewal, len(leases))
			for i := range out {
				out[i].Err = err
			}
			return out
		})
	elapsed := time.Since(start)

	out := make([]store.Renewal, len(leases))
	for i, l := range leases {
		var ok, notHeld int
		var errs []error
		for n, a := range answers {
			switch err := a[i].Err; {
			case err == nil:
				ok++
			case errors.Is(err, store.ErrNotHeld):
				notHeld++
			default:
				errs = append(errs, s.nodeErr(n, err))
			}
		}
		validity := l.TTL - store.Drift(l.TTL) - elapsed
		switch {
		case ok >= s.quorum && validity > 0:
			out[i].Validity = validity
		case ok >= s.quorum:
			out[i].Err = fmt.Errorf("reqlock: redlock extend: quorum reached after %v, past the lease's validity", elapsed.Round(time.Millisecond))
		case notHeld > len(s.nodes)-s.quorum:
			out[i].Err = store.ErrNotHeld
		default:
			out[i].Err = &quorumError{op: "extend", ok: ok, need: s.quorum, nodes: len(s.nodes), errs: errs}
		}
	}
	return out
}

// Release implements Store: compare-and-delete on every node, one round
// trip each. Nil when a quorum deleted our lock; store.ErrNotHeld when so many
// nodes say it is not ours that we no longer held a quorum.
func (s *Store) Release(ctx context.Context, key, token string) error {
	lg := s.late.releasing(key, token)
	answers := fanOutUntil(ctx, s.nodes, s.nodeTimeout,
		func(ctx context.Context, n *node.Node) error {
			err := n.Release(ctx, key, token)
			if lg != nil && s.late.releasedOn(lg, slices.Index(s.nodes, n), err) {
				s.takeBack(n, key, token)
			}
			return err
		},
		func(err error) error { return err },
		func(err error) bool { return err == nil }, s.quorum)
	var deleted, notHeld int
	var failed []int
	for i, err := range answers {
		switch {
		case err == nil:
			deleted++
		case errors.Is(err, store.ErrNotHeld):
			notHeld++
		default:
			failed = append(failed, i)
		}
	}
	switch {
	case deleted >= s.quorum:
		return nil
	case notHeld > len(s.nodes)-s.quorum:
		return store.ErrNotHeld
	default: // what is left expires with its lease
		return &quorumError{op: "release", ok: deleted, need: s.quorum, nodes: len(s.nodes),
			errs: s.nodeErrs(failed, func(i int) error { return answers[i] })}
	}
}

// Cancel implements store.Canceler: cancel.lua on every node at once, one round
// trip each. Nil once a quorum has run it: then no quorum can ever hold our
// token, whatever still lands; a node it did not reach may keep a late copy
// until the lease ends, which blocks only that node.
func (s *Store) Cancel(ctx context.Context, l store.Lease) error {
	answers := fanOutUntil(ctx, s.nodes, s.nodeTimeout,
		func(ctx context.Context, n *node.Node) error { return n.Cancel(ctx, l) },
		func(err error) error { return err },
		func(err error) bool { return err == nil }, len(s.nodes))
	var ok int
	var failed []int
	for i, err := range answers {
		if err == nil {
			ok++
		} else {
			failed = append(failed, i)
		}
	}
	if ok >= s.quorum {
		return nil
	}
	return &quorumError{op: "cancel", ok: ok, need: s.quorum, nodes: len(s.nodes),
		errs: s.nodeErrs(failed, func(i int) error { return answers[i] })}
}

// nodeTTL is one node's answer to a TTL query.
type nodeTTL struct {
	left time.Duration
	err  error
}

// TTL implements Store: how long a quorum of nodes still holds our lock
// (the quorum-th longest remaining lease), one round trip per node.
func (s *Store) TTL(ctx context.Context, key, token string) (time.Duration, error) {
	answers := fanOut(ctx, s.nodes, s.nodeTimeout,
		func(ctx context.Context, n *node.Node) nodeTTL {
			d, err := n.TTL(ctx, key, token)
			return nodeTTL{d, err}
		},
		func(err error) nodeTTL { return nodeTTL{err: err} })
	var left []time.Duration
	var notHeld int
	var errs []error
	for i, a := range answers {
		switch {
		case a.err == nil:
			left = append(left, a.left)
		case errors.Is(a.err, store.ErrNotHeld):
			notHeld++
		default:
			errs = append(errs, s.nodeErr(i, a.err))
		}
	}
	switch {
	case len(left) >= s.quorum:
		slices.Sort(left)
		return left[len(left)-s.quorum], nil
	case notHeld > len(s.nodes)-s.quorum:
		return 0, store.ErrNotHeld
	default:
		return 0, &quorumError{op: "ttl", ok: len(left), need: s.quorum, nodes: len(s.nodes), errs: errs}
	}
}

// Kind implements store.Kinder.
func (*Store) Kind() string { return "redlock" }

// TellsLapses implements store.LapseTeller: a Redlock holder learns of a lapsed
// lease from its own clock, so acquires carry no notice.
func (*Store) TellsLapses() bool { return false }

// giveBack cancels an acquire of l on every node, on a context of its own
// (the caller's may be what ran out, which is why) and bounded: never past
// the lease, after which there is nothing left to give back, and never
// long. A cancel, not a release: a node's part may still be on its way.
func giveBack(ctx context.Context, s *Store, l store.Lease) {
	ctx, stop := context.WithTimeout(context.WithoutCancel(ctx), min(l.TTL, 3*time.Second))
	defer stop()
	_ = s.Cancel(ctx, l)
}
