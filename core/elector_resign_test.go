package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// Once Run's context has ended the Elector is resigning: no caller may
// still be told it leads, not even in the moment before Run's goroutine
// has woken up to hand the term back. Several rounds, because that moment
// is short.
func TestElectorIsNotLeaderOnceRunsContextEnded(t *testing.T) {
	e := leadLocker(memorystore.New()).Elector("k")
	for round := range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- e.Run(ctx) }()
		within(t, 5*time.Second, "leading", func() bool { return e.IsLeader(context.Background()) == nil })
		cancel()
		err, term := e.IsLeader(context.Background()), e.Term()
		if runErr := <-done; !errors.Is(runErr, context.Canceled) {
			t.Fatalf("Run = %v, want context.Canceled", runErr)
		}
		if !errors.Is(err, core.ErrNotLeader) || term != 0 {
			t.Fatalf("round %d: right after Run's context ended, IsLeader = %v and Term = %d, want ErrNotLeader and 0", round, err, term)
		}
	}
}
