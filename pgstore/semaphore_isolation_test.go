package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/pgstore"
)

// Under a default isolation of REPEATABLE READ, an acquire that waited for
// the key's permit lock counts the permits of the snapshot it took before
// it waited: the permit committed meanwhile is another row, so nothing
// conflicts, and a limit of 1 admits two. The functions must run at READ
// COMMITTED whatever the default.
func TestPermitLimitUnderRepeatableRead(t *testing.T) {
	srv := pgtest.Shared(t)
	pool := pgtest.OpenPool(t, srv.NewDatabase(t), func(c *pgxpool.Config) {
		c.ConnConfig.RuntimeParams["default_transaction_isolation"] = "repeatable read"
		c.MaxConns = 8
	})
	s := pgstore.New(pool)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for round := range 20 {
		key := fmt.Sprintf("k%d{k%d}", round, round)
		var granted atomic.Int64
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range 8 {
			wg.Go(func() {
				<-start
				_, err := s.AcquirePermit(ctx, store.Lease{Key: key, Token: fmt.Sprintf("t%d", i), TTL: 30 * time.Second}, 1)
				switch {
				case err == nil:
					granted.Add(1)
				case !errors.Is(err, store.ErrNotObtained):
					t.Errorf("acquire: %v", err)
				}
			})
		}
		close(start)
		wg.Wait()
		if n := granted.Load(); n != 1 {
			t.Fatalf("round %d: %d permits granted with a limit of 1", round, n)
		}
	}
}
