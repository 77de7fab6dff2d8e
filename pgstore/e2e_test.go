package pgstore_test

import (
	"context"
	"testing"

	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/internal/httpcases/frameworks"
	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/pgstore"
)

// Every shared end-to-end case, on each of the four frameworks, against
// Postgres: each case on a database of its own on the shared server,
// reached through a fault proxy that plays the server down or hung.
func TestEndToEnd(t *testing.T) {
	st := httpcases.Store{Name: "postgres", Open: openBackend}
	for _, fw := range frameworks.All {
		t.Run(fw.Name, func(t *testing.T) { httpcases.RunOn(t, fw, st) })
	}
}

func openBackend(tb testing.TB) httpcases.Backend {
	srv := pgtest.Shared(tb)
	conn := srv.NewDatabase(tb)
	direct := pgtest.OpenPool(tb, conn)
	s := pgstore.New(direct)
	if err := s.Migrate(context.Background()); err != nil {
		tb.Fatal(err)
	}
	p := faultproxy.Start(tb, srv.Addr)
	via := pgstore.New(pgtest.OpenPool(tb, proxied(conn, srv.Addr, p.Addr()), quick))
	return httpcases.Backend{
		Store: via,
		Vanish: func(skey string) {
			_, _ = direct.Exec(context.Background(), "DELETE FROM reqlock_locks WHERE key = $1", skey)
		},
		Down: func() {
			p.Refuse(true)
			p.Cut()
		},
		Hang: func() {
			p.Hold(faultproxy.Upstream)
			tb.Cleanup(func() { p.Release(faultproxy.Upstream) })
		},
		Resume: func() { p.Release(faultproxy.Upstream) },
	}
}
