package core

import (
	"context"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/memorystore"
)

// stuckExtends blocks every Extend until its context ends.
type stuckExtends struct{ *memorystore.Store }

func (s stuckExtends) Extend(ctx context.Context, ls []store.Lease) []store.Renewal {
	<-ctx.Done()
	out := make([]store.Renewal, len(ls))
	for i := range out {
		out[i].Err = ctx.Err()
	}
	return out
}

// While a Refresh is stuck, the watchdog leaves its lock alone: it does
// not spin on it.
func TestWatchdogDoesNotSpinOnStuckRefresh(t *testing.T) {
	l := NewLocker(stuckExtends{memorystore.New()}, WithTTL(3*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lk, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release(ctx)
	// The renewal falls due at 1s, while the Refresh is stuck until 1.5s.
	rctx, rcancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer rcancel()
	_ = lk.Refresh(rctx, 3*time.Second)

	l.dog.mu.Lock()
	turns := l.dog.turns
	l.dog.mu.Unlock()
	// A handful: the first look, the due renewal, a retry a tenth of the
	// lease later. A loop that polls the busy lock every millisecond makes
	// hundreds.
	if turns > 20 {
		t.Fatalf("the watchdog looked %d times in 1.5s at one lock whose Refresh was stuck", turns)
	}
}
