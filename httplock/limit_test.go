package httplock_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

// A full key's rejection is ErrLimitReached, not ErrLocked: 429 with its own
// code, unwrapping to core.ErrNotObtained, its Retry-After cut to the
// shortest lease left among the holders.
func TestLimitFullKeyRejection(t *testing.T) {
	ctx := t.Context()
	l := core.NewLocker(memorystore.New(), core.WithTTL(2*time.Second), core.WithoutWatchdog())
	e, err := httplock.NewEngine(httplock.Config{Locker: l, Limit: 2, RetryAfter: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	sem := l.Semaphore(2)
	for range 2 {
		permit, err := sem.TryObtain(ctx, httplock.LockKey("s", "k"))
		if err != nil {
			t.Fatal(err)
		}
		defer permit.Release(context.Background())
	}
	rej := e.Serve(ctx, "s", "k", nil, func(context.Context) { t.Fatal("the handler ran on a full key") })
	switch {
	case rej == nil:
		t.Fatal("no rejection")
	case !errors.Is(rej, httplock.ErrLimitReached) || errors.Is(rej, httplock.ErrLocked) || !errors.Is(rej, core.ErrNotObtained):
		t.Fatalf("rejection %v: want ErrLimitReached and core.ErrNotObtained, not ErrLocked", rej)
	case rej.Status != http.StatusTooManyRequests || rej.Problem.Code != "limit_reached":
		t.Fatalf("status %d code %q, want 429 limit_reached", rej.Status, rej.Problem.Code)
	case rej.RetryAfter < time.Second || rej.RetryAfter > 2*time.Second:
		t.Fatalf("Retry-After %v, want the lease left (2s at most), under the 5s hint", rej.RetryAfter)
	}
}

// A key's permits and its lock are apart: a route with Limit runs while a
// route with the same scope and one request at a time holds the key.
func TestLimitApartFromTheLock(t *testing.T) {
	ctx := t.Context()
	l := core.NewLocker(memorystore.New())
	e, err := httplock.NewEngine(httplock.Config{Locker: l, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	lk, err := l.TryObtain(ctx, httplock.LockKey("s", "k"))
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release(context.Background())
	ran := false
	if rej := e.Serve(ctx, "s", "k", nil, func(ctx context.Context) {
		permit, ok := core.FromContext(ctx)
		ran = ok && permit != lk
	}); rej != nil || !ran {
		t.Fatalf("with the key's lock held: rejection %v, ran with a permit of its own %v", rej, ran)
	}
}
