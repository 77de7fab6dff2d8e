package pgstore_test

import (
	"context"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/handoffbench"
	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/pgstore"
)

// BenchmarkPermitHandOff is a permit (limit 1) passed between two
// instances (two stores, each its own pool) beside a lock passed so, in one
// interleaved run (handoffbench). No bar: reported, as permit/lock.
func BenchmarkPermitHandOff(b *testing.B) {
	conn := pgtest.Shared(b).NewDatabase(b)
	var stores [2]store.Store
	q := [2]*handoffbench.Queued{handoffbench.NewQueued(), handoffbench.NewQueued()}
	for i := range stores {
		s := pgstore.New(pgtest.OpenPool(b, conn))
		if err := s.Migrate(context.Background()); err != nil {
			b.Fatal(err)
		}
		stores[i] = queuedPG{s, q[i]}
	}
	handoffbench.Run(b, stores, q, core.WithLogger(quiet))
}

// queuedPG is the store, telling q when a waiter's attempt was refused.
type queuedPG struct {
	*pgstore.Store
	q *handoffbench.Queued
}

func (s queuedPG) AcquireQueued(ctx context.Context, l store.Lease, waiter string, withRecord bool) (store.Grant, []byte, error) {
	g, rec, err := s.Store.AcquireQueued(ctx, l, waiter, withRecord)
	s.q.LockRefused(err)
	return g, rec, err
}

func (s queuedPG) AcquirePermitQueued(ctx context.Context, l store.Lease, limit int, waiter string) (store.Grant, error) {
	g, err := s.Store.AcquirePermitQueued(ctx, l, limit, waiter)
	s.q.PermitRefused(err)
	return g, err
}
