package redlock

import (
	"context"
	"errors"
	"slices"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/redisstore/internal/node"
)

// AcquireQueued implements store.Waker. A Redlock waiter joins the line on each
// node where it finds the lock taken, but a release hands the lock to
// nobody: each node would pick its own head, and a hand-off split over the
// nodes would reach no quorum. A release tells everyone in line instead.
func (s *Store) AcquireQueued(ctx context.Context, l store.Lease, waiter string, withRecord bool) (store.Grant, []byte, error) {
	if withRecord {
		return store.Grant{}, nil, store.ErrNoRecords
	}
	g, err := s.acquire(ctx, l, waiter)
	return g, nil, err
}

// Leave implements store.Waker: out of the line on every node, best effort: a
// node that does not answer drops the line at the next release, or when
// the line expires.
func (s *Store) Leave(ctx context.Context, key, waiter string) error {
	fanOut(ctx, s.nodes, s.nodeTimeout,
		func(ctx context.Context, n *node.Node) error { return n.Leave(ctx, key, waiter) },
		func(err error) error { return err })
	return nil
}

// Subscribe implements store.Waker: one subscription per node, since any quorum
// may release, and a word from any node will do.
func (s *Store) Subscribe(prefix, instance string, wake func(key, waiter string)) store.Subscription {
	subs := make(redlockSub, len(s.nodes))
	for i, n := range s.nodes {
		subs[i] = n.Subscribe(prefix, instance, wake)
	}
	return subs
}

type redlockSub []store.Subscription

// Hold returns once a quorum of nodes confirmed: a release reaches a
// quorum, so one of those nodes will tell.
func (r redlockSub) Hold(ctx context.Context) (func(), error) {
	type result struct {
		done func()
		err  error
	}
	results := make(chan result, len(r))
	for _, sub := range r {
		go func() {
			done, err := sub.Hold(ctx)
			results <- result{done, err}
		}()
	}
	var dones []func()
	var failed []error
	for range r {
		if res := <-results; res.err != nil {
			failed = append(failed, res.err)
		} else {
			dones = append(dones, res.done)
		}
	}
	done := func() {
		for _, f := range dones {
			f()
		}
	}
	if len(dones) < len(r)/2+1 {
		done()
		return nil, errors.Join(failed...)
	}
	return done, nil
}

func (r redlockSub) Listening() bool {
	return !slices.ContainsFunc(r, func(sub store.Subscription) bool {
		l, ok := sub.(store.Listener)
		return !ok || !l.Listening()
	})
}
