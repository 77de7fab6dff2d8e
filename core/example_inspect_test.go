package core_test

import (
	"context"
	"fmt"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// Inspect tells an operator who holds a key without touching it; WithHolder
// names the instance in the answer.
func ExampleLocker_Inspect() {
	store := memorystore.New() // redisstore.New(client) across instances
	web1 := core.NewLocker(store, core.WithHolder("web-1"))
	ctx := context.Background()

	lk, _ := web1.TryObtain(ctx, "order:1042")
	h, _ := web1.Inspect(ctx, "order:1042")
	fmt.Println(h.Held, h.Holder, h.Fence == lk.Fence(), h.Lease <= web1.TTL())

	_ = lk.Release(ctx)
	h, _ = web1.Inspect(ctx, "order:1042")
	fmt.Println(h.Held, h.Holder == "")
	// Output:
	// true web-1 true true
	// false true
}
