package pgstore_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/pgstore"
)

// A database or role whose default isolation is REPEATABLE READ or
// SERIALIZABLE (ALTER DATABASE ... SET default_transaction_isolation,
// common where the application wants it for its own transactions) runs
// the store's statements at that level too. The functions lock the key's
// row after their first statement took the snapshot, which under
// contention is a serialization failure: the store must still take or
// refuse every lock, never fail as unavailable (a 503).
func TestContentionUnderStricterDefaultIsolation(t *testing.T) {
	for _, iso := range []string{"repeatable read", "serializable"} {
		t.Run(iso, func(t *testing.T) {
			srv := pgtest.Shared(t)
			pool := pgtest.OpenPool(t, srv.NewDatabase(t), func(c *pgxpool.Config) {
				c.ConnConfig.RuntimeParams["default_transaction_isolation"] = iso
			})
			s := pgstore.New(pool)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			var failed atomic.Int64
			var first atomic.Value
			var wg sync.WaitGroup
			for range 4 {
				l := core.NewLocker(s, core.WithTTL(5*time.Second), core.WithoutWatchdog())
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 100 {
						lk, err := l.TryObtain(ctx, "hot")
						if err == nil {
							err = lk.Release(ctx)
						}
						if err != nil && !errors.Is(err, core.ErrNotObtained) {
							failed.Add(1)
							first.CompareAndSwap(nil, err.Error())
						}
					}
				}()
			}
			wg.Wait()
			if n := failed.Load(); n > 0 {
				t.Fatalf("%d of 400 lock calls failed under contention at %s: first %v", n, iso, first.Load())
			}
		})
	}
}
