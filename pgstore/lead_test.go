package pgstore_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/leadtest"
	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/pgstore"
)

// Three processes lead one key on one PostgreSQL; the leader is stopped
// (SIGSTOP) for two leases, then the next one killed: at most one acts at
// a time, terms only grow, a new leader acts within a lease and a
// hand-off, and the register that checks terms takes no stale write.
func TestLeadFailover(t *testing.T) {
	if leadtest.Child(leadChildStore) {
		return
	}
	const ttl = time.Second
	srv := pgtest.Shared(t)
	conn := srv.NewDatabase(t) // its connection string
	pool := pgtest.OpenPool(t, conn)
	if err := pgstore.New(pool).Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := leadtest.NewRun(t, ttl)
	var insts []leadtest.Instance
	for _, n := range []string{"a", "b", "c"} {
		insts = append(insts, r.Spawn(n, []string{conn}))
	}
	r.Drive(insts, leadtest.Pause, leadtest.Kill)
	r.Check(ttl + store.HandOffTimeout + 750*time.Millisecond)
}

// leadChildStore is a child instance's store: the database at addrs[0],
// migrated by the parent.
func leadChildStore(addrs []string) (core.Store, func()) {
	pool, err := pgxpool.New(context.Background(), addrs[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgstore lead child:", err)
		os.Exit(2)
	}
	s := pgstore.New(pool)
	return s, pool.Close
}
