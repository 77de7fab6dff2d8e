package lockertest

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// Waiters on several instances are served in the order they joined the
// line, one at a time.
func lineServesInOrder(t *testing.T, stores []Store) {
	for _, sc := range stores {
		if sc.Name == "redlock" { // no line on Redlock
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			s, _ := sc.Open(t)
			ctx := Context(t, 10*time.Second)
			holder := NewLocker(s)
			lk, err := holder.TryObtain(ctx, "k")
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var order []int
			var wg sync.WaitGroup
			for i := range 5 {
				l := NewLocker(s)
				wg.Go(func() {
					next, err := l.Obtain(ctx, "k")
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					order = append(order, i)
					mu.Unlock()
					time.Sleep(5 * time.Millisecond)
					_ = next.Release(ctx)
				})
				time.Sleep(40 * time.Millisecond) // join in turn
			}
			_ = lk.Release(ctx)
			wg.Wait()
			if fmt.Sprint(order) != "[0 1 2 3 4]" {
				t.Fatalf("served in the order %v, want the order they joined", order)
			}
		})
	}
}
