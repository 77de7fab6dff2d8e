package redlock_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/redisstore/redlock"
)

// A Locker over five independent Redis masters: a lock is held while a
// majority (three) granted it.
func Example() {
	addrs := strings.Fields(os.Getenv("REDLOCK_ADDRS")) // five host:port, space-separated
	if len(addrs) == 0 {
		fmt.Println("set REDLOCK_ADDRS to run this example")
		return
	}
	var clients []redis.UniversalClient
	for _, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a, ContextTimeoutEnabled: true})
		defer c.Close()
		clients = append(clients, c)
	}
	store := redlock.New(clients...)
	lk, err := core.NewLocker(store).TryObtain(context.Background(), "report-2026-11")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer lk.Release(context.Background())
	fmt.Println("held on a quorum of", store.Quorum())
}
