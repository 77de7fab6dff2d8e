package etcdstore_test

import (
	"context"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/etcdstore"
	"github.com/reqlock/reqlock/internal/etcdtest"
	"github.com/reqlock/reqlock/internal/handoffbench"
)

// BenchmarkPermitHandOff is a permit (limit 1) passed between two
// instances (two stores, each its own client) beside a lock passed so, in
// one interleaved run (handoffbench). No bar: reported, as permit/lock.
func BenchmarkPermitHandOff(b *testing.B) {
	c := etcdtest.Start(b)
	q := [2]*handoffbench.Queued{handoffbench.NewQueued(), handoffbench.NewQueued()}
	stores := [2]store.Store{queuedEtcd{etcdstore.New(c.Client(b)), q[0]}, queuedEtcd{etcdstore.New(c.Client(b)), q[1]}}
	handoffbench.Run(b, stores, q, core.WithLogger(quietLog()))
}

// queuedEtcd is the store, telling q when a waiter's attempt was refused.
type queuedEtcd struct {
	*etcdstore.Store
	q *handoffbench.Queued
}

func (s queuedEtcd) AcquireQueued(ctx context.Context, l store.Lease, waiter string, withRecord bool) (store.Grant, []byte, error) {
	g, rec, err := s.Store.AcquireQueued(ctx, l, waiter, withRecord)
	s.q.LockRefused(err)
	return g, rec, err
}

func (s queuedEtcd) AcquirePermitQueued(ctx context.Context, l store.Lease, limit int, waiter string) (store.Grant, error) {
	g, err := s.Store.AcquirePermitQueued(ctx, l, limit, waiter)
	s.q.PermitRefused(err)
	return g, err
}
