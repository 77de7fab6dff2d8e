package core_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// leadLocker is a Locker for the leadership tests, silent.
func leadLocker(s core.Store, opts ...core.Option) *core.Locker {
	return core.NewLocker(s, append([]core.Option{core.WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)
}

// within waits up to d for cond, failing the test with what otherwise.
func within(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestLeadRunsFnWithTheTermAndResignsWhenItReturns(t *testing.T) {
	s := memorystore.New()
	l := leadLocker(s)
	ctx := context.Background()
	boom := errors.New("done")
	var term uint64
	err := l.Lead(ctx, "job", func(ctx context.Context) error {
		lk, ok := core.FromContext(ctx)
		if !ok {
			t.Fatal("fn's context carries no lock")
		}
		term = lk.Fence()
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Lead = %v, want fn's error", err)
	}
	if term == 0 {
		t.Fatal("term 0")
	}
	// Resigned: the key is free for anyone at once.
	lk, err := l.TryObtain(ctx, "job")
	if err != nil {
		t.Fatalf("after Lead returned the key is still taken: %v", err)
	}
	if lk.Fence() <= term {
		t.Fatalf("next fence %d, not above the term %d", lk.Fence(), term)
	}
	lk.Release(ctx)
}

func TestLeadReturnsTheContextErrorAndResignsWhenCtxEnds(t *testing.T) {
	l := leadLocker(memorystore.New())
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- l.Lead(ctx, "job", func(fctx context.Context) error {
			close(started)
			<-fctx.Done()
			return errors.New("fn's own error")
		})
	}()
	<-started
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Lead = %v, want context.Canceled", err)
	}
	lk, err := l.TryObtain(context.Background(), "job")
	if err != nil {
		t.Fatalf("the key is still taken after Lead returned: %v", err)
	}
	lk.Release(context.Background())
}

func TestLeadRefusesBadInput(t *testing.T) {
	l := leadLocker(memorystore.New())
	ctx := context.Background()
	if err := l.Lead(ctx, "job", nil); !errors.Is(err, core.ErrNilFunc) {
		t.Errorf("nil fn: %v, want ErrNilFunc", err)
	}
	ran := false
	if err := l.Lead(ctx, "", func(context.Context) error { ran = true; return nil }); !errors.Is(err, core.ErrEmptyKey) || ran {
		t.Errorf("empty key: %v (ran %v), want ErrEmptyKey and fn not run", err, ran)
	}
}

// A term lost while fn runs: fn's context is cancelled with ErrLockLost,
// and Lead campaigns again and runs fn in a new, greater term.
func TestLeadCampaignsAgainAfterALostTerm(t *testing.T) {
	s := memorystore.New()
	const ttl = 150 * time.Millisecond
	l := leadLocker(s, core.WithTTL(ttl))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	terms := make(chan uint64, 4)
	causes := make(chan error, 4)
	done := make(chan error, 1)
	go func() {
		done <- l.Lead(ctx, "job", func(fctx context.Context) error {
			lk, _ := core.FromContext(fctx)
			terms <- lk.Fence()
			<-fctx.Done()
			causes <- context.Cause(fctx)
			return errors.New("dropped: the term was lost")
		})
	}()
	first := <-terms
	skey, _ := l.StoreKey("job")
	s.Delete(skey) // the lock is gone from the store: the next renewal finds out
	if cause := <-causes; !errors.Is(cause, core.ErrLockLost) {
		t.Fatalf("cause of fn's context: %v, want ErrLockLost", cause)
	}
	select {
	case second := <-terms:
		if second <= first {
			t.Fatalf("second term %d, not above the first %d", second, first)
		}
	case err := <-done:
		t.Fatalf("Lead returned %v instead of campaigning again", err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Lead = %v", err)
	}
}

// While one instance leads, another campaigns: it takes over the moment
// the first resigns, in a greater term, and never runs at the same time.
func TestLeadFollowerTakesOverOnResign(t *testing.T) {
	s := memorystore.New()
	a, b := leadLocker(s), leadLocker(s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resign := make(chan struct{})
	aTerm := make(chan uint64, 1)
	aDone := make(chan error, 1)
	go func() {
		aDone <- a.Lead(ctx, "job", func(ctx context.Context) error {
			lk, _ := core.FromContext(ctx)
			aTerm <- lk.Fence()
			<-resign
			return nil
		})
	}()
	first := <-aTerm
	bTerm := make(chan uint64, 1)
	bDone := make(chan error, 1)
	go func() {
		bDone <- b.Lead(ctx, "job", func(ctx context.Context) error {
			lk, _ := core.FromContext(ctx)
			bTerm <- lk.Fence()
			return nil
		})
	}()
	select {
	case <-bTerm:
		t.Fatal("the follower led while the leader still did")
	case <-time.After(200 * time.Millisecond):
	}
	close(resign)
	if err := <-aDone; err != nil {
		t.Fatal(err)
	}
	select {
	case second := <-bTerm:
		if second <= first {
			t.Fatalf("follower's term %d, not above %d", second, first)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the follower did not take over")
	}
	if err := <-bDone; err != nil {
		t.Fatal(err)
	}
}

// A store that fails while Lead campaigns is tried again; Lead does not
// give up with the store's error.
func TestLeadCampaignsThroughAStoreFailure(t *testing.T) {
	s := memorystore.New()
	g := newFlakyStore(s, 3)
	l := leadLocker(g, core.WithTTL(100*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := l.Lead(ctx, "job", func(context.Context) error { return nil })
	if err != nil {
		t.Fatalf("Lead = %v, want nil after the store came back", err)
	}
	if g.failed() < 3 {
		t.Fatalf("the store failed %d times, want 3", g.failed())
	}
}
