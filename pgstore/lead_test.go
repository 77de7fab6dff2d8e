package pgstore_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/leadtest"
	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/pgstore"
)

// Three instances lead one key on one PostgreSQL, and the leader is
// killed (kill -9 of its process), stopped (SIGSTOP) for two leases, or
// has its link held for two leases and then delivered, twice a row: at
// most one acts at a time, terms only grow, a new leader acts within a
// lease and a hand-off, and the register that checks terms takes no stale
// write. The rows are printed as internal/safety prints its own.
func TestLeadSafety(t *testing.T) {
	if leadtest.Child(leadChildStore) {
		return
	}
	const ttl = time.Second
	srv := pgtest.Shared(t)
	conn := srv.NewDatabase(t) // its connection string
	if err := pgstore.New(pgtest.OpenPool(t, conn)).Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	tg := leadtest.Target{Store: "postgres", Addrs: []string{conn},
		Linked: func(string) (store.Store, []*faultproxy.Proxy) {
			p := faultproxy.Start(t, srv.Addr)
			return pgstore.New(pgtest.OpenPool(t, strings.Replace(conn, srv.Addr, p.Addr(), 1))), []*faultproxy.Proxy{p}
		}}
	var rows []leadtest.Row
	for _, f := range []struct {
		name  string
		fault leadtest.Fault
	}{{"kill", leadtest.Kill}, {"pause", leadtest.Pause}, {"link-held", leadtest.Hold}} {
		t.Run(f.name, func(t *testing.T) { rows = append(rows, leadtest.Scenario(t, tg, ttl, f.fault)) })
	}
	t.Logf("leadership on PostgreSQL:\n%s", leadtest.FormatRows(rows))
}

// leadChildStore is a child instance's store: the database at addrs[0],
// migrated by the parent.
func leadChildStore(addrs []string) (core.Store, func()) {
	pool, err := pgxpool.New(context.Background(), addrs[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgstore lead child:", err)
		os.Exit(2)
	}
	return pgstore.New(pool), pool.Close
}
