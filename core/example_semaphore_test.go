package core_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// At most two exports per user at a time: a third is refused while two
// run, and told how long the first may still hold its permit.
func ExampleSemaphore() {
	exports := core.NewLocker(memorystore.New()).Semaphore(2)
	ctx := context.Background()

	first, _ := exports.TryObtain(ctx, "user-42")
	second, _ := exports.TryObtain(ctx, "user-42")
	_, err := exports.TryObtain(ctx, "user-42")
	_, known := core.HolderTTL(err)
	fmt.Println(errors.Is(err, core.ErrNotObtained), known)

	holders, _ := exports.Inspect(ctx, "user-42")
	fmt.Println(len(holders), second.Fence() > first.Fence())

	_ = first.Release(ctx)
	err = exports.Do(ctx, "user-42", func(ctx context.Context) error {
		permit, _ := core.FromContext(ctx)
		fmt.Println(permit.Fence() > second.Fence())
		return nil
	})
	fmt.Println(err)
	_ = second.Release(ctx)
	// Output:
	// true true
	// 2 true
	// true
	// <nil>
}
