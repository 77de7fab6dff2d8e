package core_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// The same race seen through Once on two Lockers over one store: fn runs at
// most once per key.
func TestOnceRunsOnceUnderRace(t *testing.T) {
	store := memorystore.New()
	lockers := []*core.Locker{core.NewLocker(store), core.NewLocker(store), core.NewLocker(store), core.NewLocker(store)}
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	doubles := 0
	iters := 0
	for ; iters < 50000 && time.Now().Before(deadline) && doubles == 0; iters++ {
		key := fmt.Sprintf("once-%d", iters)
		var runs atomic.Int64
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, l := range lockers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, err := l.Once(ctx, key, time.Minute, func(context.Context) ([]byte, error) {
					runs.Add(1)
					return []byte("x"), nil
				})
				if err != nil {
					t.Errorf("Once: %v", err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if n := runs.Load(); n > 1 {
			doubles++
			t.Errorf("key %s: fn ran %d times; Once promises at most once per key within retention", key, n)
		}
	}
	t.Logf("%d keys", iters)
}
