package pgstore_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/pgstore"
)

func TestMain(m *testing.M) {
	runOnceChild() // a child process of records_tx_pause_test.go runs its part and exits
	runHTTPChild() // and one of replay_tx_pause_test.go
	pgtest.Main(m)
}

// open returns a migrated store on a fresh database of the shared server,
// and its pool.
func open(t testing.TB, opts ...pgstore.Option) (*pgstore.Store, *pgxpool.Pool) {
	t.Helper()
	pool := pgtest.Shared(t).Pool(t)
	s := pgstore.New(pool, opts...)
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, pool
}
