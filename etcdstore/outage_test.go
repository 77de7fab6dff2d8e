package etcdstore_test

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/etcdstore"
	"github.com/reqlock/reqlock/internal/etcdtest"
)

// An outage's error says which server, at which address, and whether it
// refused or went silent, and errors.Is finds the cause: etcd's client
// alone says "context deadline exceeded" either way.
func TestOutageErrorRefused(t *testing.T) {
	c := etcdtest.Start(t)
	m := c.Members[0]
	s := etcdstore.New(c.Client(t))
	if err := acquireWithin(s, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	m.Kill()
	err := acquireWithin(s, time.Second)
	if !errors.Is(err, syscall.ECONNREFUSED) || !strings.Contains(err.Error(), "etcd at "+m.Endpoint()) || !strings.Contains(err.Error(), "refuse") {
		t.Fatalf("etcd down: %v; want connection refused, naming etcd at %s", err, m.Endpoint())
	}
}

func TestOutageErrorSilent(t *testing.T) {
	c := etcdtest.Start(t)
	m := c.Members[0]
	s := etcdstore.New(c.Client(t))
	if err := acquireWithin(s, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	m.Pause()
	defer m.Resume()
	err := acquireWithin(s, time.Second)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "etcd at "+m.Endpoint()) || !strings.Contains(err.Error(), "did not answer") {
		t.Fatalf("etcd stopped (SIGSTOP): %v; want a deadline, naming etcd at %s and that it did not answer", err, m.Endpoint())
	}
}

func acquireWithin(s store.Store, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_, err := s.Acquire(ctx, store.Lease{Key: "reqlock:{outage}", Token: "t" + time.Now().Format("150405.000000000"), TTL: 2 * time.Second})
	return err
}
