package redlock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/redisstore/internal/node"
)

// nodeHolding is one node's answer to an inspect.
type nodeHolding struct {
	h   store.Holding
	id  string // digest of the lock's value on that node, "" when free
	err error
}

// Inspect implements store.Inspector: inspect.lua on every node at once, one
// round trip each, and this rule over their answers:
//
//   - Held when a quorum of nodes hold the same value (one holder's token,
//     compared by digest, never sent). store.Lease is the quorum-th longest lease
//     among those nodes (how long a quorum still holds it, as TTL), Holder
//     their label.
//   - Free when no holder can have a quorum, even counting every node that
//     did not answer as its.
//   - Otherwise the answers cannot tell, and Inspect fails as the store
//     would: too many nodes did not answer.
//
// Fence is the greatest fence any answering node handed out for the key,
// Waiting the longest line on any node (a waiter joins the line on each node
// where it finds the key taken).
func (s *Store) Inspect(ctx context.Context, key string) (store.Holding, error) {
	answers := fanOut(ctx, s.nodes, s.nodeTimeout,
		func(ctx context.Context, n *node.Node) nodeHolding {
			h, id, err := node.InspectHolder(ctx, n, key)
			return nodeHolding{h, id, err}
		},
		func(err error) nodeHolding { return nodeHolding{err: err} })

	var out store.Holding
	var failed []int
	byHolder := make(map[string][]int, 1)
	for i, a := range answers {
		if a.err != nil {
			failed = append(failed, i)
			continue
		}
		out.Fence = max(out.Fence, a.h.Fence)
		out.Waiting = max(out.Waiting, a.h.Waiting)
		if a.h.Held {
			byHolder[a.id] = append(byHolder[a.id], i)
		}
	}
	var most []int
	for _, nodes := range byHolder {
		if len(nodes) > len(most) {
			most = nodes
		}
	}
	switch {
	case len(most) >= s.quorum:
		leases := make([]time.Duration, len(most))
		for j, i := range most {
			leases[j] = answers[i].h.Lease
		}
		slices.Sort(leases)
		first := answers[most[0]].h
		out.Held, out.HandedOff, out.Holder = true, first.HandedOff, first.Holder
		out.Lease = leases[len(leases)-s.quorum]
		return out, nil
	case len(most)+len(failed) >= s.quorum:
		errs := s.nodeErrs(failed, func(i int) error { return answers[i].err })
		return store.Holding{}, fmt.Errorf("reqlock: redlock inspect: %d of %d nodes answered, too few to tell whether a quorum of %d holds the key: %w",
			len(s.nodes)-len(failed), len(s.nodes), s.quorum, errors.Join(errs...))
	default:
		return out, nil
	}
}
