package fence_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/pgstore/fence"
	"github.com/reqlock/reqlock/redisstore"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// openDB is a database/sql handle on a fresh database, with the fences
// table and an orders table.
func openDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", pgtest.Shared(t).NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	ctx := context.Background()
	if err := fence.CreateTable(ctx, db); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE orders (id int PRIMARY KEY, paid_by bigint)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO orders VALUES (42, NULL)"); err != nil {
		t.Fatal(err)
	}
	return db
}

// pay is the guarded write: the fence check, then the write, in one
// transaction.
func pay(ctx context.Context, db *sql.DB, lk *core.Lock) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := fence.Check(ctx, tx, "order-42", lk.Fence()); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE orders SET paid_by = $1 WHERE id = 42", int64(lk.Fence())); err != nil {
		return err
	}
	return tx.Commit()
}

// A holder on Redis that paused past its lease, after the next holder
// wrote, is refused: its write does not commit.
func TestStaleRedisHolderIsRefused(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	locker := core.NewLocker(redisstore.New(redistest.Start(t).Client(t)),
		core.WithTTL(200*time.Millisecond), core.WithoutWatchdog())
	old, err := locker.Obtain(ctx, "order-42")
	if err != nil {
		t.Fatal(err)
	}
	<-old.Lost() // the pause: its lease ran out
	next, err := locker.Obtain(ctx, "order-42")
	if err != nil {
		t.Fatal(err)
	}
	if err := pay(ctx, db, next); err != nil {
		t.Fatalf("the holder's write: %v", err)
	}
	if err := pay(ctx, db, next); err != nil {
		t.Fatalf("the holder's second write, same fence: %v", err)
	}
	if err := pay(ctx, db, old); !errors.Is(err, fence.ErrStale) {
		t.Fatalf("the stale holder's write: %v, want ErrStale", err)
	}
	var paidBy int64
	if err := db.QueryRowContext(ctx, "SELECT paid_by FROM orders WHERE id = 42").Scan(&paidBy); err != nil {
		t.Fatal(err)
	}
	if uint64(paidBy) != next.Fence() {
		t.Fatalf("paid by fence %d, want the current holder's %d", paidBy, next.Fence())
	}
}

// A stale write racing the newer one waits for its commit, then is
// refused: the fence row stays locked until the transaction ends.
func TestStaleWriteWaitsForTheNewer(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	newer, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = newer.Rollback() }()
	if err := fence.Check(ctx, newer, "r", 20); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		tx, err := db.BeginTx(ctx, nil)
		if err == nil {
			err = fence.Check(ctx, tx, "r", 10)
			_ = tx.Rollback()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("the stale check answered (%v) before the newer write ended", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := newer.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; !errors.Is(err, fence.ErrStale) {
		t.Fatalf("the stale check after the newer commit: %v, want ErrStale", err)
	}
}

func TestFenceOutOfRange(t *testing.T) {
	db := openDB(t)
	if err := fence.Check(context.Background(), db, "r", 0); err == nil || errors.Is(err, fence.ErrStale) {
		t.Fatalf("fence 0: %v, want a range error", err)
	}
}

// CheckPgx is the same check in a pgx transaction.
func TestCheckPgx(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Shared(t).Pool(t)
	if _, err := pool.Exec(ctx, fence.Schema); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fence uint64
		stale bool
	}{{5, false}, {5, false}, {9, false}, {7, true}} {
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		err = fence.CheckPgx(ctx, tx, "r", c.fence)
		if errors.Is(err, fence.ErrStale) != c.stale || (err != nil && !c.stale) {
			t.Fatalf("fence %d: %v, stale %v", c.fence, err, c.stale)
		}
		if err := tx.Commit(ctx); err != nil && !c.stale {
			t.Fatal(err)
		}
	}
}
