package pgstore_test

import (
	"context"
	"fmt"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/pgstore"
)

// A payment made exactly once per order: Once runs it in the store's
// transaction, which commits the payment, the record and the release
// together. The second call replays the record and pays nothing.
func ExampleWithTx() {
	ctx := context.Background()
	pool, closePool := examplePool()
	defer closePool()
	if err := pgstore.New(pool).Migrate(ctx); err != nil {
		fmt.Println(err)
		return
	}

	store := pgstore.New(pool, pgstore.WithTx())
	locker := core.NewLocker(store)
	for range 2 {
		out, err := locker.Once(ctx, "order-42", 0, func(ctx context.Context) ([]byte, error) {
			tx, _ := pgstore.Tx(ctx) // READ COMMITTED, guarded; the store commits it with the record
			_, err := tx.Exec(ctx, "INSERT INTO payments (order_id) VALUES ($1)", 42)
			return []byte("paid"), err
		})
		fmt.Println(string(out.Value), out.Replayed, err)
	}
	var n int
	_ = pool.QueryRow(ctx, "SELECT count(*) FROM payments").Scan(&n)
	fmt.Println("payments:", n)
	// Output:
	// paid false <nil>
	// paid true <nil>
	// payments: 1
}
