package snippets

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// Two instances run Leader; only one writes at a time, so the account
// never refuses a write until the test ends them.
func TestLeaderWritesUnderOneTermAtATime(t *testing.T) {
	store, acct := memorystore.New(), &Account{}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for range 2 {
		wg.Go(func() { errs <- Leader(ctx, core.NewLocker(store), acct) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Leader = %v, want the context's error", err)
		}
	}
	if acct.balance == 0 {
		t.Error("no leader wrote")
	}
}

// The leader's Consume applies the jobs; nothing is refused.
func TestConsumeAppliesOnTheLeader(t *testing.T) {
	acct := &Account{}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	jobs := make(chan int64)
	done := make(chan error, 1)
	go func() { done <- Consume(ctx, core.NewLocker(memorystore.New()), acct, jobs) }()
	for acct.snapshot() < 5 && ctx.Err() == nil {
		select {
		case jobs <- 1:
		case <-ctx.Done():
		}
	}
	cancel()
	<-done
	if acct.snapshot() < 5 {
		t.Fatalf("balance %d: the leader did not apply the jobs", acct.snapshot())
	}
}

// recordingScheduler says when it was started and shut down.
type recordingScheduler struct{ started, stopped chan struct{} }

func (s *recordingScheduler) Start() error { close(s.started); return nil }
func (s *recordingScheduler) Shutdown()    { close(s.stopped) }

// AsynqOnLeader starts the scheduler while it leads and shuts it down
// when ctx ends.
func TestAsynqOnLeaderStartsAndStopsTheScheduler(t *testing.T) {
	s := &recordingScheduler{started: make(chan struct{}), stopped: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- AsynqOnLeader(ctx, core.NewLocker(memorystore.New()), func() AsynqScheduler { return s })
	}()
	<-s.started
	cancel()
	<-s.stopped
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("AsynqOnLeader = %v", err)
	}
}

func (a *Account) snapshot() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.balance
}
