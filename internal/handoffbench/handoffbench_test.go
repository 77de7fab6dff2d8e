package handoffbench

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/memorystore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// signalled is the memory store, telling q when a waiter's attempt was
// refused, as the stores' benchmarks wrap theirs.
type signalled struct {
	*memorystore.Store
	q *Queued
}

func (s signalled) AcquireQueued(ctx context.Context, l store.Lease, waiter string, withRecord bool) (store.Grant, []byte, error) {
	g, rec, err := s.Store.AcquireQueued(ctx, l, waiter, withRecord)
	s.q.LockRefused(err)
	return g, rec, err
}

func (s signalled) AcquirePermitQueued(ctx context.Context, l store.Lease, limit int, waiter string) (store.Grant, error) {
	g, err := s.Store.AcquirePermitQueued(ctx, l, limit, waiter)
	s.q.PermitRefused(err)
	return g, err
}

// Two Lockers over one memory store pass the lock and the permit back and
// forth: every iteration is a hand-off (none hangs), the figures come out,
// and nothing is left running.
func TestRunHandsOffBetweenTwoInstances(t *testing.T) {
	m := memorystore.New()
	q := [2]*Queued{NewQueued(), NewQueued()}
	res := testing.Benchmark(func(b *testing.B) {
		Run(b, [2]store.Store{signalled{m, q[0]}, signalled{m, q[1]}}, q)
	})
	if res.N == 0 {
		t.Fatal("no iteration ran")
	}
	for _, metric := range []string{"lock-retaken/op", "permit-retaken/op"} {
		if _, ok := res.Extra[metric]; !ok {
			t.Errorf("no %s among %v", metric, res.Extra)
		}
	}
}
