package redlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore/redlock"
)

// Over Redlock, which keeps no permits, KeepsPermits says so, and so does
// every Semaphore call, at once.
func TestSemaphoreRedlockRefused(t *testing.T) {
	var srvs []*redistest.Server
	for range 3 {
		srvs = append(srvs, redistest.Start(t))
	}
	s := redlock.New(srvs[0].Client(t), srvs[1].Client(t), srvs[2].Client(t))
	l := core.NewLocker(s)
	if l.KeepsPermits() {
		t.Fatal("KeepsPermits over Redlock: true, want false")
	}
	sem := l.Semaphore(2)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := sem.TryObtain(ctx, "k"); !errors.Is(err, core.ErrSemaphoreUnsupported) {
		t.Fatalf("TryObtain: %v, want ErrSemaphoreUnsupported", err)
	}
	if _, err := sem.Obtain(ctx, "k"); !errors.Is(err, core.ErrSemaphoreUnsupported) {
		t.Fatalf("Obtain: %v, want ErrSemaphoreUnsupported", err)
	}
	if err := sem.Do(ctx, "k", func(context.Context) error { t.Fatal("fn ran"); return nil }); !errors.Is(err, core.ErrSemaphoreUnsupported) {
		t.Fatalf("Do: %v, want ErrSemaphoreUnsupported", err)
	}
	if _, err := sem.Inspect(ctx, "k"); !errors.Is(err, core.ErrSemaphoreUnsupported) {
		t.Fatalf("Inspect: %v, want ErrSemaphoreUnsupported", err)
	}
}
