package core

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/memorystore"
)

// runOut makes lk's lease over by our clock while nothing else looks at
// it: the watchdog forgets it first, so only the clock can tell, as in a
// process that resumes after a stop past its lease before its watchdog
// has run.
func runOut(t *testing.T, lk *Lock) {
	t.Helper()
	w := &lk.locker.dog
	w.remove(lk)
	w.mu.Lock()
	lk.validUntil = time.Now().Add(-time.Millisecond)
	w.mu.Unlock()
	if lk.done() {
		t.Fatal("the lock was marked lost: the test needs it not to be")
	}
}

func TestTermContextIsOverWhenTheLeaseRanOutByTheClock(t *testing.T) {
	l := NewLocker(memorystore.New())
	lk, err := l.TryObtain(context.Background(), "k")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := lk.termContext(context.Background())
	defer cancel()
	if ctx.Err() != nil {
		t.Fatalf("a fresh term's context: %v", ctx.Err())
	}
	runOut(t, lk)
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("Err after the lease ran out = %v, want Canceled", ctx.Err())
	}
	if cause := context.Cause(ctx); !errors.Is(cause, ErrLockLost) {
		t.Fatalf("Cause = %v, want ErrLockLost", cause)
	}
	select {
	case <-ctx.Done():
	default:
		t.Fatal("Done not closed once Err said the term was over")
	}
}

func TestElectorIsNotLeaderOnceTheLeaseRanOutByTheClock(t *testing.T) {
	l := NewLocker(memorystore.New())
	e := l.Elector("k")
	lk, err := l.TryObtain(context.Background(), "k")
	if err != nil {
		t.Fatal(err)
	}
	e.setTerm(lk, context.Background()) // as Run does when its term begins; a live context, so that the clock alone must end it
	if err := e.IsLeader(context.Background()); err != nil {
		t.Fatalf("IsLeader in a live term = %v", err)
	}
	if e.Term() != lk.Fence() {
		t.Fatalf("Term = %d, want %d", e.Term(), lk.Fence())
	}
	runOut(t, lk)
	if err := e.IsLeader(context.Background()); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("IsLeader after the lease ran out = %v, want ErrNotLeader", err)
	}
	if e.Term() != 0 {
		t.Fatalf("Term after the lease ran out = %d, want 0", e.Term())
	}
}
