package fence_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/pgstore/fence"
)

// A write under a lock checks the lock's fence first, in its own
// transaction: a holder that lost the lock is refused.
func Example() {
	ctx := context.Background()
	db := exampleDB()
	defer db.Close()

	locker := core.NewLocker(memorystore.New()) // Redis in a real service
	lk, _ := locker.Obtain(ctx, "order-42")
	defer lk.Release(ctx)

	tx, _ := db.BeginTx(ctx, nil)
	if err := fence.Check(ctx, tx, "order-42", lk.Fence()); err != nil {
		_ = tx.Rollback()
		fmt.Println(errors.Is(err, fence.ErrStale))
		return
	}
	_, _ = tx.ExecContext(ctx, "INSERT INTO payments VALUES ($1)", 42)
	fmt.Println(tx.Commit())
	// Output: <nil>
}

// exampleDB stands in for the app's database: a fresh one on the tests'
// server, with the fences table (fence.Schema, run once) and a payments
// table.
func exampleDB() *sql.DB {
	srv, err := pgtest.SharedServer()
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	admin, err := sql.Open("pgx", srv.ConnString("postgres"))
	if err != nil {
		panic(err)
	}
	_, _ = admin.ExecContext(ctx, "DROP DATABASE IF EXISTS fence_example WITH (FORCE)")
	_, err = admin.ExecContext(ctx, "CREATE DATABASE fence_example")
	_ = admin.Close()
	if err != nil {
		panic(err)
	}
	db, err := sql.Open("pgx", srv.ConnString("fence_example"))
	if err != nil {
		panic(err)
	}
	if err := fence.CreateTable(ctx, db); err != nil {
		panic(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE payments (order_id int)"); err != nil {
		panic(err)
	}
	return db
}
