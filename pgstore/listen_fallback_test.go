package pgstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/pgstore"
)

// The pool's connections work but a new one cannot be opened (the
// server's max_connections reached, a connection limit, a proxy that
// refuses): the waiter must not wait for a LISTEN connection up to its
// release timeout (3s), but listen on one of the pool's or fall back to
// its backoff at once: a waiter whose caller waits less than that would
// never try again, and be refused although the holder let go long
// before.
func TestWaiterWithoutListenFallsBackToPolling(t *testing.T) {
	srv := pgtest.Shared(t)
	conn := srv.NewDatabase(t)
	direct := pgstore.New(pgtest.OpenPool(t, conn))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := direct.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	p := faultproxy.Start(t, srv.Addr)
	pool := pgtest.OpenPool(t, proxied(conn, srv.Addr, p.Addr()), func(c *pgxpool.Config) {
		c.MaxConns, c.MinConns = 4, 0
	})
	// Open the pool's connections, then refuse new ones.
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := pool.Exec(ctx, "SELECT pg_sleep(0.1)"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	p.Refuse(true)

	holder := core.NewLocker(direct, core.WithTTL(10*time.Second))
	lk, err := holder.TryObtain(ctx, "acct")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		_ = lk.Release(context.Background())
	}()
	waiter := core.NewLocker(pgstore.New(pool), core.WithTTL(10*time.Second))
	wctx, stop := context.WithTimeout(ctx, 2*time.Second)
	defer stop()
	start := time.Now()
	got, err := waiter.Obtain(wctx, "acct")
	if err != nil {
		t.Fatalf("Obtain of a key released after 200ms, with no LISTEN connection to be had: %v after %v",
			err, time.Since(start).Round(time.Millisecond))
	}
	_ = got.Release(ctx)
}

// A pool whose connections are completed by its BeforeConnect hook (a
// host from service discovery, a short-lived IAM token as the password)
// is what pgxpool is for; a LISTEN connection dialled from the pool's
// ConnConfig alone would skip the hook and never listen: every wake-up
// lost, waiters only polling.
func TestListenUsesThePoolsConnectHook(t *testing.T) {
	srv := pgtest.Shared(t)
	conn := srv.NewDatabase(t)
	pool := pgtest.OpenPool(t, conn, func(c *pgxpool.Config) {
		port := c.ConnConfig.Port
		c.ConnConfig.Port = 1 // filled in by the hook
		c.BeforeConnect = func(_ context.Context, cc *pgx.ConnConfig) error {
			cc.Port = port
			return nil
		}
	})
	s := pgstore.New(pool)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	holder := core.NewLocker(s, core.WithTTL(10*time.Second))
	lk, err := holder.TryObtain(ctx, "acct")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lk.Release(context.Background()) }()
	waiter := core.NewLocker(s, core.WithTTL(10*time.Second))
	wctx, stop := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if got, err := waiter.Obtain(wctx, "acct"); err == nil {
			_ = got.Release(context.Background())
		}
	}()
	time.Sleep(time.Second)
	var listening int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND query ILIKE 'LISTEN %'`).Scan(&listening); err != nil {
		t.Fatal(err)
	}
	<-done
	if listening == 0 {
		t.Fatal("a waiter has waited a second and no session of the database listens for its wake-up")
	}
}
