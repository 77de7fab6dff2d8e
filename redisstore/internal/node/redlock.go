package node

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core/store"
)

// What the Redlock store asks of a node beyond the contract: an acquire
// with the caller's clock for the fence, an inspect that says which holder it saw,
// and a release that tells every listener.

// AcquireAbove runs the acquire script on n with clock (the caller's clock
// in microseconds, formatted) as the fence's clock, so that the fences of
// different nodes are comparable (see acquire.lua). A waiter ("" for none)
// joins the node's line when it finds the lock taken. fence is 0 when the
// lock is taken, and remaining then says for how long.
func AcquireAbove(ctx context.Context, n *Node, l store.Lease, clock any, waiter string) (fence uint64, remaining time.Duration, err error) {
	var a acquireAnswer
	var resent bool
	if waiter == "" {
		a, resent, err = n.acquireLean(ctx, l, clock, false)
	} else {
		ttl, fttl := n.leaseArgs(l.TTL)
		var cmd *redis.Cmd
		cmd, resent = n.sendAcquire(ctx, acquireQueuedCall, queuedArgs(l, ttl, fttl, clock, waiter, false), l.Token)
		a, err = acquireReply(cmd)
	}
	if resent {
		a, err = n.voidRefused(ctx, l, waiter, a, resent, err)
	}
	return a.fence, a.remaining, err
}

// InspectHolder is Inspect that also returns an id of the holder it saw,
// the same on every node for one holder, "" when free.
func InspectHolder(ctx context.Context, n *Node, key string) (store.Holding, string, error) {
	return n.inspect(ctx, key)
}

// WakeEveryone makes n's releases tell every listener, with nobody in line:
// the nodes of a Redlock keep no line of their own that counts.
func WakeEveryone(n *Node) { n.wakeAll = true }
