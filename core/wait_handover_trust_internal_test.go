package core

import (
	"context"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/memorystore"
)

// A waiter relies on a hand-off without asking the store only when its
// fence says it came after the waiter's last refused attempt, and enough of
// its lease is left, counted from when that attempt was sent.
func TestHandedOverOnlyWhenProvablyCurrent(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	cases := []struct {
		name                string
		fence, refusedFence uint64
		refusedAt           time.Time
		rtt                 time.Duration
		withRecord, manual  bool
		want                bool
	}{
		{name: "current", fence: 8, refusedFence: 7, refusedAt: now, want: true},
		{name: "told without a fence", fence: 0, refusedFence: 7, refusedAt: now},
		{name: "no fence seen when refused", fence: 8, refusedFence: 0, refusedAt: now},
		{name: "the same fence", fence: 7, refusedFence: 7, refusedAt: now},
		{name: "an older fence", fence: 6, refusedFence: 7, refusedAt: now},
		{name: "too little lease left", fence: 8, refusedFence: 7, refusedAt: now.Add(-validity(store.HandOffTimeout) + minHandedOver/2)},
		{name: "lease over", fence: 8, refusedFence: 7, refusedAt: now.Add(-time.Second)},
		{name: "a slow link", fence: 8, refusedFence: 7, refusedAt: now, rtt: 40 * time.Millisecond},
		{name: "a fast link", fence: 8, refusedFence: 7, refusedAt: now, rtt: time.Millisecond, want: true},
		{name: "looks for a record", fence: 8, refusedFence: 7, refusedAt: now, withRecord: true},
		{name: "no watchdog", fence: 8, refusedFence: 7, refusedAt: now, manual: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := []Option{WithTTL(10 * time.Second)}
			if c.manual {
				opts = append(opts, WithoutWatchdog())
			}
			l := NewLocker(memorystore.New(), opts...)
			lk := l.handedOver(ctx, "k", "reqlock:{k}", "i/w", c.fence, refusal{at: c.refusedAt, rtt: c.rtt, fence: c.refusedFence}, c.withRecord)
			if got := lk != nil; got != c.want {
				t.Fatalf("handed over: %v, want %v", got, c.want)
			}
			if lk == nil {
				return
			}
			if lk.Token() != "~i/w" || lk.Fence() != c.fence {
				t.Fatalf("token %q fence %d", lk.Token(), lk.Fence())
			}
			// Valid no longer than the hand-off's lease from the refused
			// attempt; whatever reaches the store no further than one from now.
			if !lk.validUntil.Equal(c.refusedAt.Add(validity(store.HandOffTimeout))) || lk.reach.After(time.Now().Add(store.HandOffTimeout)) {
				t.Fatalf("valid until %v, reach %v", lk.validUntil, lk.reach)
			}
			l.dog.remove(lk)
		})
	}
}
