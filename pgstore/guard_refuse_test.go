package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/pgstore"
)

// While the holder runs a Guard-ed transaction under a lease that is still
// running, another TryObtain of the key is refused as taken at once
// (ErrNotObtained: a 409 with Retry-After in Reject mode), as on any other
// store: the acquire does not wait on the row the Guard locks (which
// would end as ErrUnavailable, a 503, at the caller's deadline).
func TestGuardedHolderRefusesOthersAtOnce(t *testing.T) {
	s, pool := open(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	holder := core.NewLocker(s, core.WithTTL(10*time.Second))
	lk, err := holder.TryObtain(ctx, "acct")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lk.Release(context.Background()) }()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if err := s.Guard(ctx, tx, lk); err != nil {
		t.Fatal(err)
	}

	other := core.NewLocker(s, core.WithTTL(10*time.Second))
	actx, stop := context.WithTimeout(ctx, time.Second)
	defer stop()
	start := time.Now()
	l2, err := other.TryObtain(actx, "acct")
	if err == nil {
		_ = l2.Release(ctx)
		t.Fatal("took a key held under a live lease")
	}
	if !errors.Is(err, core.ErrNotObtained) {
		t.Fatalf("TryObtain of a key whose holder is in a guarded transaction, after %v: %v; want ErrNotObtained",
			time.Since(start).Round(time.Millisecond), err)
	}
}

// Duplicates of a guarded request, refused at once, hold none of the
// pool's connections: a lock call on an unrelated key still gets one
// while the holder's transaction runs.
func TestGuardedKeyStarvesOtherKeys(t *testing.T) {
	s, pool := open(t)
	small := pgxpoolOf(t, pool, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	holder := core.NewLocker(s, core.WithTTL(10*time.Second))
	lk, err := holder.TryObtain(ctx, "acct")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lk.Release(context.Background()) }()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if err := s.Guard(ctx, tx, lk); err != nil {
		t.Fatal(err)
	}

	// A second store on a small pool of its own: the service's other
	// instance, where duplicates of the guarded request arrive.
	other := core.NewLocker(small, core.WithTTL(10*time.Second))
	dups := make(chan error, 3)
	for range 3 {
		go func() {
			dctx, stop := context.WithTimeout(ctx, 3*time.Second)
			defer stop()
			l2, err := other.TryObtain(dctx, "acct")
			if err == nil {
				_ = l2.Release(context.Background())
			}
			dups <- err
		}()
	}
	time.Sleep(300 * time.Millisecond)
	uctx, stop := context.WithTimeout(ctx, time.Second)
	unrelated, err := other.TryObtain(uctx, "someone-else")
	stop()
	for range 3 {
		<-dups
	}
	if err != nil {
		t.Fatalf("TryObtain of an unrelated key while duplicates of a guarded one are refused: %v", err)
	}
	_ = unrelated.Release(ctx)
}

// pgxpoolOf returns a store on a new pool of at most n connections to the
// same database as pool.
func pgxpoolOf(t *testing.T, pool *pgxpool.Pool, n int32) *pgstore.Store {
	t.Helper()
	p := pgtest.OpenPool(t, pool.Config().ConnString(), func(c *pgxpool.Config) { c.MaxConns = n })
	return pgstore.New(p)
}

// A lease that ran out while its holder's Guard-ed transaction is still
// open is not taken before the transaction ends (Guard's promise), but
// another TryObtain is told at once that the key is taken, with a short
// hint of how long, rather than wait for the transaction.
func TestGuardedLapsedLeaseIsTakenPromptly(t *testing.T) {
	s, pool := open(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	holder := core.NewLocker(s, core.WithTTL(200*time.Millisecond), core.WithoutWatchdog())
	lk, err := holder.TryObtain(ctx, "acct")
	if err != nil {
		t.Fatal(err)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if err := s.Guard(ctx, tx, lk); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond) // the lease runs out under the guard

	other := core.NewLocker(s, core.WithTTL(10*time.Second))
	actx, stop := context.WithTimeout(ctx, time.Second)
	defer stop()
	l2, err := other.TryObtain(actx, "acct")
	if err == nil {
		_ = l2.Release(ctx)
		t.Fatal("took a key whose lapsed holder's guarded transaction is open")
	}
	left, ok := core.HolderTTL(err)
	if !errors.Is(err, core.ErrNotObtained) || !ok || left <= 0 || left > time.Second {
		t.Fatalf("TryObtain of a lapsed, guarded key: %v (holder's time left %v); want ErrNotObtained with a short hint", err, left)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	l2, err = other.TryObtain(ctx, "acct")
	if err != nil {
		t.Fatalf("TryObtain once the guarded transaction ended: %v", err)
	}
	if l2.Fence() <= lk.Fence() {
		t.Fatalf("fence %d after %d", l2.Fence(), lk.Fence())
	}
	_ = l2.Release(ctx)
}
