package main

import (
	"strings"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/pgstore"
)

// On PostgreSQL a holder past its lease inside a transaction it guarded
// still keeps the key: the command says held past its lease, by whom.
func TestInspectCommandGuardedPastLease(t *testing.T) {
	ctx := ctxT(t)
	conn := pgtest.Shared(t).NewDatabase(t)
	pool := pgtest.OpenPool(t, conn)
	s := pgstore.New(pool)
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	const ttl = 300 * time.Millisecond
	l := core.NewLocker(s, core.WithTTL(ttl), core.WithoutWatchdog(), core.WithHolder("web-1"), core.WithLogger(quiet))
	lk, err := l.TryObtain(ctx, "acct")
	if err != nil {
		t.Fatal(err)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if err := s.Guard(ctx, tx, lk); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * ttl)
	r := runEnv(map[string]string{envPostgres: conn}, "inspect", "acct")
	if f := fields(t, r.stdout); r.code != 0 || !strings.HasPrefix(f["state"], "held past its lease") ||
		f["holder"] != "web-1" || f["lease"] != "0s" {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
