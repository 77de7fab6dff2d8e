package core_test

import (
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
)

// acquire.lua's own-token path (an acquire sent again that finds its own
// token) never shortens the lease: "the holder may have extended it since,
// and trusts that". MemoryStore, which "follows the same rules as
// RedisStore", overwrites the expiry with now+TTL on the same path, so a
// repeated Acquire cuts a lease the holder extended and trusts.
func TestMemoryOwnTokenAcquireKeepsLongerLease(t *testing.T) {
	ctx := ctxT(t, 10*time.Second)
	stores := map[string]core.Store{
		"memory": core.NewMemoryStore(),
		"redis":  core.NewRedisStore(redistest.Start(t).Client(t)),
	}
	for name, st := range stores {
		t.Run(name, func(t *testing.T) {
			l := core.Lease{Key: "reqlock:{own-token}", Token: "me", TTL: time.Second}
			if _, err := st.Acquire(ctx, l); err != nil {
				t.Fatal(err)
			}
			r := st.Extend(ctx, []core.Lease{{Key: l.Key, Token: l.Token, TTL: 30 * time.Second}})[0]
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
