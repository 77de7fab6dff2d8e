package core_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
)

// Without the watchdog each lock's next look is its own deadline, with no
// slack to batch neighbours, so the loop wakes once per lock, and every
// wake scans every held lock under the watchdog mutex: O(n²) per lease.
// With a few thousand locks taken a moment apart, the loop falls behind
// their deadlines by far more than the margin (ttl/100 + 2ms), and other
// callers take keys whose holders have not yet been told they lost them.
func TestAttackManyLocksWithoutWatchdogLostTooLate(t *testing.T) {
	st := core.NewMemoryStore()
	const (
		n   = 10000
		ttl = 500 * time.Millisecond
	)
	l := newLocker(st, core.WithTTL(ttl), core.WithoutWatchdog())
	other := newLocker(st, core.WithTTL(ttl), core.WithoutWatchdog())
	ctx := ctxT(t, 20*time.Second)

	locks := make([]*core.Lock, n)
	began := time.Now()
	for i := range locks {
		lk, err := l.TryObtain(ctx, fmt.Sprint("k", i))
		if err != nil {
			t.Fatal(err)
		}
		locks[i] = lk
	}
	t.Logf("%d locks taken in %v", n, time.Since(began).Round(time.Millisecond))
	t.Cleanup(func() {
		for _, lk := range locks {
			_ = lk.Release(ctx)
		}
	})

	// Another caller takes each key as soon as the store frees it, and
	// checks that the old holder was told by then.
	var bad, worstIdx int
	var worst time.Duration
	for i, lk := range locks {
		var got *core.Lock
		for got == nil {
			var err error
			if got, err = other.TryObtain(ctx, fmt.Sprint("k", i)); err != nil {
				got = nil
				if ctx.Err() != nil {
					t.Fatal(err)
				}
			}
		}
		takenAt := time.Now()
		select {
		case <-lk.Lost():
		default:
			bad++
			<-lk.Lost()
			if late := time.Since(takenAt); late > worst {
				worst, worstIdx = late, i
			}
		}
		_ = got.Release(ctx)
	}
	if bad > 0 {
		t.Fatalf("%d of %d keys were taken by another caller while their holder still believed it held them; "+
			"worst: lock %d was told %v after the takeover", bad, n, worstIdx, worst.Round(time.Millisecond))
	}
}
