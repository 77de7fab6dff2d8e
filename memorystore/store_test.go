package memorystore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore"
)

// acquire.lua's own-token path (an acquire sent again that finds its own
// token) never shortens the lease: "the holder may have extended it since,
// and trusts that". memorystore.Store, which "follows the same rules as
// redisstore.Store", overwrites the expiry with now+TTL on the same path, so a
// repeated Acquire cuts a lease the holder extended and trusts.
func TestMemoryOwnTokenAcquireKeepsLongerLease(t *testing.T) {
	ctx := ctxT(t, 10*time.Second)
	stores := map[string]core.Store{
		"memory": memorystore.New(),
		"redis":  redisstore.New(redistest.Start(t).Client(t)),
	}
	for name, st := range stores {
		t.Run(name, func(t *testing.T) {
			l := store.Lease{Key: "reqlock:{own-token}", Token: "me", TTL: time.Second}
			if _, err := st.Acquire(ctx, l); err != nil {
				t.Fatal(err)
			}
			r := st.Extend(ctx, []store.Lease{{Key: l.Key, Token: l.Token, TTL: 30 * time.Second}})[0]
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			// The first acquire, sent again (a retried command, a duplicate).
			if _, err := st.Acquire(ctx, l); err != nil {
				t.Fatal(err)
			}
			left, err := st.TTL(ctx, l.Key, l.Token)
			if err != nil {
				t.Fatal(err)
			}
			if left < 29*time.Second {
				t.Fatalf("%s: a repeated Acquire cut the lease the holder extended to 30s down to %v", name, left)
			}
		})
	}
}

// In-process locks keep the same margin as Redis ones: the holder knows it
// lost the lock before another caller can take it.
func TestMemoryLostBeforeOthersTakeOver(t *testing.T) {
	st := memorystore.New()
	holder := newLocker(st, core.WithTTL(100*time.Millisecond), core.WithoutWatchdog())
	other := newLocker(st)
	ctx := ctxT(t, 30*time.Second)
	for round := range 25 {
		key := fmt.Sprint("k", round)
		lk, err := holder.TryObtain(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		for {
			next, err := other.TryObtain(ctx, key)
			if err != nil {
				time.Sleep(time.Millisecond) // a hungry contender
				continue
			}
			select {
			case <-lk.Lost():
			default:
				t.Fatalf("round %d: another caller took the key before its holder's Lost fired", round)
			}
			_ = next.Release(ctx)
			break
		}
	}
}
