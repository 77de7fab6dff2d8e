package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// An outage's error says which server, at which address, and whether it
// refused or went silent, and errors.Is finds the cause: a person reading
// the log knows what to check.
func TestOutageErrorRefused(t *testing.T) {
	srv := redistest.Start(t)
	s := redisstore.New(srv.Client(t))
	srv.Kill()
	err := acquireWithin(s, 500*time.Millisecond)
	if !errors.Is(err, syscall.ECONNREFUSED) || !strings.Contains(err.Error(), srv.Addr) || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("Redis down: %v; want connection refused, naming %s", err, srv.Addr)
	}
}

func TestOutageErrorSilent(t *testing.T) {
	srv := redistest.Start(t)
	s := redisstore.New(srv.Client(t))
	if err := acquireWithin(s, 5*time.Second); err != nil {
		t.Fatal(err) // a connection in the pool, to the server about to stop
	}
	srv.Pause()
	defer srv.Resume()
	err := acquireWithin(s, 300*time.Millisecond)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), srv.Addr) || !strings.Contains(err.Error(), "did not answer") {
		t.Fatalf("Redis stopped (SIGSTOP): %v; want a deadline, naming %s and that it did not answer", err, srv.Addr)
	}
}

func acquireWithin(s store.Store, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_, err := s.Acquire(ctx, store.Lease{Key: "reqlock:{outage}", Token: "t" + time.Now().Format("150405.000000000"), TTL: time.Second})
	return err
}
