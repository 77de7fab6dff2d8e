package pgtest_test

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/reqlock/reqlock/internal/pgtest"
)

// The binary's shared server answers on 127.0.0.1; a test would take a
// database of its own on it with Shared(t).Pool(t).
func Example() {
	s, err := pgtest.SharedServer()
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	c, err := pgx.Connect(ctx, s.ConnString("postgres"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close(ctx)
	var on string
	_ = c.QueryRow(ctx, "SHOW fsync").Scan(&on)
	fmt.Println("fsync", on)
	// Output: fsync off
}
