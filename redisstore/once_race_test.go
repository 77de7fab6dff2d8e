package redisstore_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// The same race on Redis, where the look-up and the acquire are one script.
func TestRedisOnceRunsOnceUnderRace(t *testing.T) {
	c := redistest.Start(t).Client(t)
	store := redisstore.New(c)
	lockers := []*core.Locker{newLocker(store), newLocker(store), newLocker(store), newLocker(store)}
	ctx := context.Background()
	deadline := time.Now().Add(5 * time.Second)
	iters := 0
	for ; time.Now().Before(deadline); iters++ {
		key := fmt.Sprintf("once-%d", iters)
		var runs atomic.Int64
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, l := range lockers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if _, err := l.Once(ctx, key, time.Minute, func(context.Context) ([]byte, error) {
					runs.Add(1)
					return []byte("x"), nil
				}); err != nil {
					t.Errorf("Once: %v", err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if n := runs.Load(); n > 1 {
			t.Fatalf("key %s: fn ran %d times on Redis", key, n)
		}
	}
	t.Logf("%d keys, no double run", iters)
}
