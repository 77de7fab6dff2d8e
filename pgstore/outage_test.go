package pgstore_test

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/pgstore"
)

// An outage's error says which server, at which address, and whether it
// refused or went silent, and errors.Is finds the cause.
func TestOutageErrorRefused(t *testing.T) {
	srv := pgtest.Start(t)
	s := outageStore(t, srv)
	srv.Kill()
	err := acquireWithin(s, 2*time.Second)
	if !errors.Is(err, syscall.ECONNREFUSED) || !strings.Contains(err.Error(), "PostgreSQL at "+srv.Addr) || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("PostgreSQL down: %v; want connection refused, naming PostgreSQL at %s", err, srv.Addr)
	}
}

func TestOutageErrorSilent(t *testing.T) {
	srv := pgtest.Start(t)
	s := outageStore(t, srv)
	srv.Pause()
	defer srv.Resume()
	err := acquireWithin(s, 500*time.Millisecond)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "PostgreSQL at "+srv.Addr) || !strings.Contains(err.Error(), "did not answer") {
		t.Fatalf("PostgreSQL stopped (SIGSTOP): %v; want a deadline, naming PostgreSQL at %s and that it did not answer", err, srv.Addr)
	}
}

// outageStore is a migrated store on srv whose pool already holds a
// connection, as a running service's does.
func outageStore(t *testing.T, srv *pgtest.Server) *pgstore.Store {
	s := pgstore.New(srv.Pool(t))
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := acquireWithin(s, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	return s
}

func acquireWithin(s store.Store, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_, err := s.Acquire(ctx, store.Lease{Key: "reqlock:{outage}", Token: "t" + time.Now().Format("150405.000000000"), TTL: time.Second})
	return err
}
