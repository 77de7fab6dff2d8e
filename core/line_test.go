package core_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// Waiters on several instances are served in the order they joined the
// line, one at a time.
func TestLineServesInOrder(t *testing.T) {
	for _, sc := range contractStores {
		if sc.name == "redlock" { // no line on Redlock
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			s, _ := sc.open(t)
			ctx := ctxT(t, 10*time.Second)
			holder := newLocker(s)
			lk, err := holder.TryObtain(ctx, "k")
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var order []int
			var wg sync.WaitGroup
			for i := range 5 {
				l := newLocker(s)
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

// A waiter at the head of the line that died holds the key up for
// HandOffTimeout at most; one that leaves passes its turn on at once.
func TestDeadHeadOfLineIsBounded(t *testing.T) {
	c := redistest.Start(t).Client(t)
	st := redisstore.New(c)
	ctx := ctxT(t, 10*time.Second)
	key := "reqlock:{line}"
	if _, err := st.Acquire(ctx, store.Lease{Key: key, Token: "holder", TTL: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	for _, ghost := range []string{"dead", "leaving"} {
		if _, _, err := st.AcquireQueued(ctx, store.Lease{Key: key, Token: ghost + "-token", TTL: time.Second}, ghost, false); !errors.Is(err, core.ErrNotObtained) {
			t.Fatalf("%s joins the line: %v", ghost, err)
		}
	}
	if err := st.Release(ctx, key, "holder"); err != nil {
		t.Fatal(err)
	}
	if v, left := c.Get(ctx, key).Val(), c.PTTL(ctx, key).Val(); v != "~dead" || left > store.HandOffTimeout {
		t.Fatalf("after the release the lock holds %q for %v, want a hand-off to the head for at most %v", v, left, store.HandOffTimeout)
	}
	// The dead waiter never claims it: the hand-off runs out, and the key
	// is free.
	waitFor(t, "the dead head's hand-off to run out", func() bool { return c.Exists(ctx, key).Val() == 0 })

	// The next holder releases to the one left in line, which leaves: the
	// lock goes on at once.
	if _, err := st.Acquire(ctx, store.Lease{Key: key, Token: "second", TTL: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := st.Release(ctx, key, "second"); err != nil {
		t.Fatal(err)
	}
	if v := c.Get(ctx, key).Val(); v != "~leaving" {
		t.Fatalf("lock holds %q, want a hand-off to the waiter still in line", v)
	}
	if err := st.Leave(ctx, key, "leaving"); err != nil {
		t.Fatal(err)
	}
	if n := c.Exists(ctx, key, key+":q").Val(); n != 0 {
		t.Fatalf("%d keys left after the last waiter left", n)
	}
}
