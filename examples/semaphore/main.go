// Command semaphore shows core.Semaphore: at most 2 exports per user at a
// time across two instances of a service. Each instance starts exports for
// two users; a third export of a user waits for one of the first two to
// finish, wherever it runs.
//
//	go run ./examples/semaphore              # memory store (two instances in one process)
//	REDIS_URL=redis://127.0.0.1:6379/0 go run ./examples/semaphore
package main

import (
	"context"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/examples/internal/storeenv"
)

const (
	perUser   = 2 // exports of one user at a time, across instances
	instances = 2
	exports   = 3 // started per user by each instance
)

func main() {
	store, which, closeStore, err := storeenv.Open()
	if err != nil {
		log.Fatal(err)
	}
	defer closeStore()
	fmt.Printf("%d instances, %d exports per user on each, at most %d per user at a time, on the %s\n\n",
		instances, exports, perUser, which)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var (
		mu      sync.Mutex
		running = map[string]int{}
		most    = map[string]int{}
		wg      sync.WaitGroup
	)
	start := time.Now()
	for i := range instances {
		// One Locker per instance, and one Semaphore of it shared by its
		// handlers.
		sem := core.NewLocker(store, core.WithTTL(2*time.Second)).Semaphore(perUser)
		for _, user := range []string{"alice", "bob"} {
			for e := range exports {
				wg.Go(func() {
					err := sem.Do(ctx, "export:"+user, func(ctx context.Context) error {
						mu.Lock()
						running[user]++
						most[user] = max(most[user], running[user])
						n := running[user]
						mu.Unlock()
						lk, _ := core.FromContext(ctx)
						fmt.Printf("%6s  instance %d  %-5s export %d runs  (%d of %s's running, fence %d)\n",
							time.Since(start).Round(time.Millisecond), i, user, e, n, user, lk.Fence())
						time.Sleep(150 * time.Millisecond) // the export
						mu.Lock()
						running[user]--
						mu.Unlock()
						return nil
					})
					if err != nil {
						log.Printf("instance %d, %s export %d: %v", i, user, e, err)
					}
				})
			}
		}
	}
	wg.Wait()
	fmt.Printf("\n%d exports in %v; at most %d of alice's and %d of bob's ran at once\n",
		2*instances*exports, time.Since(start).Round(time.Millisecond), most["alice"], most["bob"])
}
