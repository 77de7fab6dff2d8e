package core_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// Do is the decorator: fn runs only while this process holds the key, and
// the lock is released when fn returns, fails or panics.
func ExampleLocker_Do() {
	locker := core.NewLocker(memorystore.New()) // redisstore.New(client) across instances

	err := locker.Do(context.Background(), "order:1042", func(ctx context.Context) error {
		lk, _ := core.FromContext(ctx)
		fmt.Println("charging order", lk.Key(), "with a fence:", lk.Fence() > 0)
		return nil
	})
	fmt.Println("err:", err)
	// Output:
	// charging order order:1042 with a fence: true
	// err: <nil>
}

// TryObtain does not wait: a duplicate learns at once that the key is busy,
// and for how long at most if the holder stopped renewing.
func ExampleLocker_TryObtain() {
	locker := core.NewLocker(memorystore.New(), core.WithTTL(5*time.Second))
	ctx := context.Background()

	first, _ := locker.TryObtain(ctx, "user:7")
	defer first.Release(ctx)

	_, err := locker.TryObtain(ctx, "user:7")
	left, _ := core.HolderTTL(err)
	fmt.Println(errors.Is(err, core.ErrNotObtained), left > 4*time.Second)
	// Output: true true
}

// Obtain waits, here at most 100ms, and says why it stopped.
func ExampleLocker_Obtain() {
	locker := core.NewLocker(memorystore.New())
	held, _ := locker.TryObtain(context.Background(), "report:daily")
	defer held.Release(context.Background())

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := locker.Obtain(ctx, "report:daily")
	fmt.Println(errors.Is(err, core.ErrNotObtained), errors.Is(err, context.DeadlineExceeded))
	// Output: true true
}

// Once runs a job at most once per key within the retention: a redelivered
// message gets the first run's result instead of a second charge.
func ExampleLocker_Once() {
	locker := core.NewLocker(memorystore.New()) // redisstore.New(client) across instances
	charge := func(ctx context.Context) ([]byte, error) {
		fmt.Println("charging")
		return []byte("receipt-17"), nil
	}
	for range 2 { // the message is delivered twice
		out, err := locker.Once(context.Background(), "payment:17", 24*time.Hour, charge)
		fmt.Println(string(out.Value), out.Replayed, err)
	}
	// Output:
	// charging
	// receipt-17 false <nil>
	// receipt-17 true <nil>
}
