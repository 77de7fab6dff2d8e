package pgstore_test

import (
	"context"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/storetest"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/pgstore"
)

// The whole store contract, on one migrated database of the shared server;
// Slow reaches that database through a fault proxy. Writes is left out:
// the server's own background work (autovacuum) writes too, so a count of
// writes could not prove that Inspect made none.
func TestConformance(t *testing.T) {
	srv := pgtest.Shared(t)
	conn := srv.NewDatabase(t)
	shared := pgstore.New(pgtest.OpenPool(t, conn))
	if err := shared.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	var pools sync.Map // store → its pool, for Close
	storetest.Run(t, storetest.Harness{
		// A store and pool of its own per test, on the one database, so
		// that Close closes no other test's.
		New: func(t testing.TB) core.Store {
			pool := pgtest.OpenPool(t, conn)
			s := pgstore.New(pool)
			pools.Store(s, pool)
			t.Cleanup(func() { pools.Delete(s) })
			return s
		},
		Close: func(t testing.TB, s core.Store) {
			pool, ok := pools.Load(s)
			if !ok {
				t.Fatal("Close: no pool known for the store")
			}
			pool.(*pgxpool.Pool).Close()
		},
		Slow: func(t testing.TB) storetest.Slow {
			p := faultproxy.Start(t, srv.Addr)
			via := pgtest.OpenPool(t, proxied(conn, srv.Addr, p.Addr()), oneConn)
			return storetest.Slow{Store: pgstore.New(via), Hold: func(t testing.TB, _ string) func() {
				return holdNext(t, p, shared)
			}}
		},
	})
}

// oneConn makes a pool that keeps one connection and never pings it: the
// next bytes it sends are the next statement, not a ping or a new
// connection's start-up. A second connection is for the cancel, while pgx
// closes the first (it waits for the server to answer the held statement).
func oneConn(c *pgxpool.Config) {
	c.MaxConns = 2
	c.MinConns = 0
	c.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return false }
}
