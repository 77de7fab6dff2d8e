package node

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/redistest"
)

// Redis restarts without persistence between two holders: the fence
// counter is gone, and the next fence still comes out above the last one.
// The first holder's acquire sent the server's clock as the store reckons
// it (no TIME in the script); the second holder's is checked both ways:
// through the same store, which goes on reckoning from its reading, and
// through a new one, whose script reads the restarted server's clock.
func TestFenceGrowsAcrossRestartWithoutPersistence(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := New(c)
	for i, fresh := range []bool{false, true} {
		key := "reqlock:{restart-" + strconv.Itoa(i) + "}"
		var last uint64
		for j := range 20 { // the counter runs on past the clock's readings
			l := store.Lease{Key: key, Token: "a" + strconv.Itoa(j), TTL: 10 * time.Second}
			if s.clock.now() == nil && j > 0 {
				t.Fatal("no reckoned clock after an acquire that read the server's")
			}
			g, err := s.Acquire(ctx, l)
			if err != nil {
				t.Fatal(err)
			}
			if g.Fence <= last {
				t.Fatalf("fence %d after %d", g.Fence, last)
			}
			last = g.Fence
			if err := s.Release(ctx, key, l.Token); err != nil {
				t.Fatal(err)
			}
		}
		srv.Restart()
		if n := c.Exists(ctx, key+fenceSuffix).Val(); n != 0 {
			t.Fatal("the counter survived the restart")
		}
		next := s
		if fresh {
			next = New(c)
		} else if s.clock.now() == nil {
			// A slow restart: the store's script reads the clock again.
			t.Log("the store's reading of the clock ran out during the restart")
		}
		g, err := next.Acquire(ctx, store.Lease{Key: key, Token: "b", TTL: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if g.Fence <= last {
			t.Fatalf("new store %v: fence %d after the restart, %d before it", fresh, g.Fence, last)
		}
	}
}
