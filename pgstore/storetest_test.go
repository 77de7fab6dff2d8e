package pgstore_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/storetest"
	"github.com/reqlock/reqlock/internal/faultproxy"
	"github.com/reqlock/reqlock/pgstore"
	"github.com/reqlock/reqlock/pgstore/internal/pgtest"
)

// The whole store contract, on one migrated database of the shared server;
// Slow reaches that database through a fault proxy.
func TestConformance(t *testing.T) {
	srv := pgtest.Shared(t)
	conn := srv.NewDatabase(t)
	shared := pgstore.New(pgtest.OpenPool(t, conn))
	if err := shared.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	storetest.Run(t, storetest.Harness{
		New: func(testing.TB) core.Store { return shared },
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
