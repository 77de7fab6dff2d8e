package core

import (
	"context"
	"errors"
	"slices"
)

// AcquireQueued implements Waker. A Redlock waiter joins the line on each
// node where it finds the lock taken, but a release hands the lock to
// nobody: each node would pick its own head, and a hand-off split over the
// nodes would reach no quorum. A release tells everyone in line instead.
func (s *RedlockStore) AcquireQueued(ctx context.Context, l Lease, waiter string, withRecord bool) (Grant, []byte, error) {
	if withRecord {
		return Grant{}, nil, ErrNoRecords
	}
	g, err := s.acquire(ctx, l, waiter)
	return g, nil, err
}

// Leave implements Waker: out of the line on every node, best effort: a
// node that does not answer drops the line at the next release, or when
// the line expires.
func (s *RedlockStore) Leave(ctx context.Context, key, waiter string) error {
	fanOut(ctx, s.nodes, s.nodeTimeout,
		func(ctx context.Context, n *RedisStore) error { return n.Leave(ctx, key, waiter) },
		func(err error) error { return err })
	return nil
}

// Subscribe implements Waker: one subscription per node, since any quorum
// may release, and a word from any node will do.
func (s *RedlockStore) Subscribe(prefix, instance string, wake func(key, waiter string)) Subscription {
	subs := make(redlockSub, len(s.nodes))
	for i, n := range s.nodes {
		subs[i] = n.Subscribe(prefix, instance, wake)
	}
	return subs
}

type redlockSub []Subscription

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
	return !slices.ContainsFunc(r, func(sub Subscription) bool {
		l, ok := sub.(Listener)
		return !ok || !l.Listening()
	})
}
