package node

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/redistest"
)

// A caller's fence clock (redlock.Store's clock) that is not a plain number
// of at most 19 digits is refused before anything is taken.
func TestAcquireRefusesAbsurdClock(t *testing.T) {
	c := redistest.Start(t).Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l := store.Lease{Key: "reqlock:{clock}", Token: "me", TTL: time.Second}
	for _, clock := range []string{"12345678901234567890", "1e30", "-5", "0", "07"} {
		_, err := acquireReply(run(ctx, c, acquireCall, append(acquireArgs(l, int64(1000), int64(60000), 1), clock)))
		if err == nil || !strings.Contains(err.Error(), "fence clock") {
			t.Fatalf("clock %q: %v, want refused", clock, err)
		}
		if n := c.Exists(ctx, l.Key).Val(); n != 0 {
			t.Fatalf("clock %q: the lock was taken", clock)
		}
	}
	if a, err := acquireReply(run(ctx, c, acquireCall, append(acquireArgs(l, int64(1000), int64(60000), 1), "9999999999999999998"))); err != nil || a.fence != 9999999999999999998 {
		t.Fatalf("the largest clock: %d, %v", a.fence, err)
	}
}
