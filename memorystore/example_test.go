package memorystore_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// A Locker over the memory store: one holder per key in this process.
func Example() {
	locker := core.NewLocker(memorystore.New())
	ctx := context.Background()

	lk, err := locker.TryObtain(ctx, "order-42")
	if err != nil {
		panic(err)
	}
	_, err = locker.TryObtain(ctx, "order-42")
	fmt.Println("second attempt taken:", errors.Is(err, core.ErrNotObtained))
	fmt.Println("release:", lk.Release(ctx))
	// Output:
	// second attempt taken: true
	// release: <nil>
}
