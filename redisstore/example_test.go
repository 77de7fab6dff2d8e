package redisstore_test

import (
	"context"
	"fmt"
	"os"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/redisstore"
)

// A Locker over Redis. ContextTimeoutEnabled lets the caller's deadlines
// reach the socket, so a Redis that hangs holds a lock call no longer than
// its context; DialerRetries 1 makes a Redis that refuses connections fail
// at once instead of after the whole deadline.
func Example() {
	addr := os.Getenv("REDIS_ADDR") // e.g. 127.0.0.1:6379
	if addr == "" {
		fmt.Println("set REDIS_ADDR to run this example")
		return
	}
	c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, DialerRetries: 1})
	defer c.Close()
	locker := core.NewLocker(redisstore.New(c))

	err := locker.Do(context.Background(), "order-42", func(ctx context.Context) error {
		lk, _ := core.FromContext(ctx)
		fmt.Println("holding order-42 with fence", lk.Fence() > 0)
		return nil
	})
	fmt.Println(err)
}
