package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/pgstore"
)

// quick bounds dials, so that a server that is down is an error at once.
func quick(c *pgxpool.Config) { c.ConnConfig.ConnectTimeout = time.Second }

// A server killed with -9, or stopped with -m immediate, is a bounded
// ErrUnavailable, never a hang; once it is back the store works again by
// itself, and fences keep growing across both crashes.
func TestRestartKeepsFencesGrowing(t *testing.T) {
	srv := pgtest.Start(t)
	s := pgstore.New(pgtest.OpenPool(t, srv.NewDatabase(t), quick))
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	l := core.NewLocker(s, core.WithTTL(5*time.Second))
	var last uint64
	take := func(when string) {
		t.Helper()
		var lk *core.Lock
		var err error
		// The pool's connections died with the server: the first calls
		// find that out, and later ones dial anew.
		deadline := time.Now().Add(20 * time.Second)
		for {
			actx, cancel := context.WithTimeout(ctx, 2*time.Second)
			lk, err = l.TryObtain(actx, "order-1")
			cancel()
			if err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if lk.Fence() <= last {
			t.Fatalf("%s: fence %d after %d", when, lk.Fence(), last)
		}
		last = lk.Fence()
		if err := lk.Release(ctx); err != nil {
			t.Fatalf("%s: release: %v", when, err)
		}
	}
	take("before")
	for _, crash := range []struct {
		name string
		do   func()
	}{
		{"kill -9", srv.Kill},
		{"pg_ctl stop -m immediate", func() { srv.StopImmediate(t) }},
	} {
		crash.do()
		start := time.Now()
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := l.TryObtain(actx, "order-1")
		cancel()
		if !errors.Is(err, core.ErrUnavailable) {
			t.Fatalf("%s: TryObtain with the server down: %v, want ErrUnavailable", crash.name, err)
		}
		if took := time.Since(start); took > 3*time.Second {
			t.Fatalf("%s: the failure took %v, past the caller's deadline", crash.name, took)
		}
		srv.Restart(t)
		take("after " + crash.name)
	}
}

// Lock calls on a pool whose every connection is taken by slow work end
// by their own deadline.
func TestExhaustedPoolTimesOut(t *testing.T) {
	pool := pgtest.Shared(t).Pool(t, func(c *pgxpool.Config) { c.MaxConns = 2 })
	s := pgstore.New(pool)
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var held []*pgxpool.Conn
	for range 2 {
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	defer func() {
		for _, c := range held {
			c.Release()
		}
	}()
	l := core.NewLocker(s)
	start := time.Now()
	actx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err := l.TryObtain(actx, "k")
	cancel()
	if !errors.Is(err, core.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("TryObtain on an exhausted pool: %v, want ErrUnavailable and the deadline", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("took %v", took)
	}
}

// A closed pool is core.ErrStoreClosed.
func TestClosedPool(t *testing.T) {
	s, pool := open(t)
	pool.Close()
	_, err := s.Acquire(context.Background(), store.Lease{Key: "reqlock:{k}", Token: "t", TTL: time.Second})
	if !errors.Is(err, core.ErrStoreClosed) {
		t.Fatalf("Acquire on a closed pool: %v, want ErrStoreClosed", err)
	}
}
