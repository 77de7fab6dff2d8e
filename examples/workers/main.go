// Command workers shows the core lock on its own: several workers, as if in
// several instances of a service, contend for one key; each holds it in turn
// and prints the fence it got, which only ever grows.
//
//	go run ./examples/workers              # memory store
//	REDIS_URL=redis://127.0.0.1:6379/0 go run ./examples/workers
package main

import (
	"context"
	"fmt"
	"log"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/examples/internal/storeenv"
)

const (
	workers = 5
	rounds  = 3
	key     = "order-1042"
)

func main() {
	store, which, closeStore, err := storeenv.Open()
	if err != nil {
		log.Fatal(err)
	}
	defer closeStore()
	fmt.Printf("%d workers, %d rounds each, one key (%q), on the %s\n\n", workers, rounds, key, which)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var (
		inside, most atomic.Int32
		mu           sync.Mutex
		lastFence    uint64
		wg           sync.WaitGroup
	)
	start := time.Now()
	for w := range workers {
		// One Locker per worker plays one instance of a service each.
		locker := core.NewLocker(store, core.WithTTL(2*time.Second))
		wg.Go(func() {
			for range rounds {
				err := locker.Do(ctx, key, func(ctx context.Context) error {
					n := inside.Add(1)
					defer inside.Add(-1)
					if n > most.Load() {
						most.Store(n)
					}
					lk, _ := core.FromContext(ctx)
					mu.Lock()
					grew := lk.Fence() > lastFence
					lastFence = lk.Fence()
					mu.Unlock()
					fmt.Printf("%7s  worker %d holds %q  fence %d  (greater than the last: %v)\n",
						time.Since(start).Round(time.Millisecond), w, key, lk.Fence(), grew)
					time.Sleep(time.Duration(20+rand.IntN(30)) * time.Millisecond) // the work
					return nil
				})
				if err != nil {
					log.Printf("worker %d: %v", w, err)
					return
				}
			}
		})
	}
	wg.Wait()
	fmt.Printf("\n%d turns in %v; at most %d worker(s) held the lock at once\n",
		workers*rounds, time.Since(start).Round(time.Millisecond), most.Load())
}
