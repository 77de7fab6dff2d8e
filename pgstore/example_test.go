package pgstore_test

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/pgstore"
)

// One payment per order at a time across every instance, and the payment's
// write commits only while the lock is still ours: Guard, in the write's
// own transaction.
func Example() {
	ctx := context.Background()
	pool, closePool := examplePool()
	defer closePool()

	store := pgstore.New(pool)
	if err := store.Migrate(ctx); err != nil { // once, at start-up
		fmt.Println(err)
		return
	}
	locker := core.NewLocker(store)

	err := locker.Do(ctx, "order-42", func(ctx context.Context) error {
		lk, _ := core.FromContext(ctx)
		tx, err := pool.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx)
		if err := store.Guard(ctx, tx, lk); err != nil {
			return err // core.ErrNotHeld: someone else may be paying now
		}
		if _, err := tx.Exec(ctx, "INSERT INTO payments (order_id) VALUES ($1)", 42); err != nil {
			return err
		}
		return tx.Commit(ctx)
	})
	fmt.Println("paid:", err == nil)
	// Output: paid: true
}

// examplePool stands in for the app's own pool on its primary
// (pgxpool.New(ctx, os.Getenv("DATABASE_URL"))): a fresh database on the
// tests' server, with the app's table.
func examplePool() (*pgxpool.Pool, func()) {
	srv, err := pgtest.SharedServer()
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	admin, err := pgxpool.New(ctx, srv.ConnString("postgres"))
	if err != nil {
		panic(err)
	}
	defer admin.Close()
	_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS example WITH (FORCE)")
	if _, err := admin.Exec(ctx, "CREATE DATABASE example"); err != nil {
		panic(err)
	}
	pool, err := pgxpool.New(ctx, srv.ConnString("example"))
	if err != nil {
		panic(err)
	}
	if _, err := pool.Exec(ctx, "CREATE TABLE payments (order_id int)"); err != nil {
		panic(err)
	}
	return pool, pool.Close
}
