package etcdstore_test

import (
	"strings"
	"testing"
	"time"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/etcdstore"
	"github.com/reqlock/reqlock/internal/etcdtest"
	"github.com/reqlock/reqlock/internal/safety"
)

// The etcd row of the effects table (internal/safety's): a holder paused
// past its lease after its effect (one outside etcd, as a payment API's
// is), while a duplicate runs the same Once. RunAgain commits a second
// effect in every run; RefuseInDoubt refuses every duplicate and commits
// none. etcd runs no work in a transaction of its own (no WithTx).
func TestSafetyEffects(t *testing.T) {
	const (
		runs  = 10
		lease = time.Second
	)
	s := etcdstore.New(etcdtest.Start(t).Client(t))
	cols := [4]string{"etcd", "", "", "—"}
	for i, policy := range []core.DoubtPolicy{core.RunAgain, core.RefuseInDoubt} {
		holder := core.NewLocker(s, core.WithTTL(lease), core.WithoutWatchdog(), core.WithLogger(quietLog()), core.WithDoubtPolicy(policy))
		dup := core.NewLocker(s, core.WithRetry(backoff.Constant(20*time.Millisecond)), core.WithLogger(quietLog()), core.WithDoubtPolicy(policy))
		got := safety.PausedAfterEffect(holder, dup, lease, runs, safety.MemoryEffects())
		cols[1+i] = got.String()
		switch {
		case len(got.Errors) > 0:
			t.Errorf("%s", strings.Join(got.Errors, "; "))
		case policy == core.RunAgain && got.Second != runs:
			t.Errorf("RunAgain: %v; want a second effect in every run (the pause is past the lease)", got)
		case policy == core.RefuseInDoubt && (got.Second != 0 || got.Refused != runs):
			t.Errorf("RefuseInDoubt: %v; want every duplicate refused and no second effect", got)
		}
	}
	t.Log("\n" + safety.EffectsTable([][4]string{cols}))
}
