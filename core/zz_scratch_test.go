package core_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
)

func TestScratchFence(t *testing.T) {
	_, clients := startRedlock(t, 5)
	s := core.NewRedlockStore(clients...)
	l := newLocker(s, core.WithTTL(time.Second), core.WithRetry(backoff.Exponential(time.Millisecond, 20*time.Millisecond)))
	var mu sync.Mutex
	var last uint64
	var lastT time.Time
	var wg sync.WaitGroup
	ctx := context.Background()
	for range 8 {
		wg.Go(func() {
			for range 10 {
				lk, err := l.Obtain(ctx, "x")
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				now := time.Now()
				if lk.Fence() <= last {
					t.Errorf("fence %d -> %d (back %dus); now-lastT=%v; fence vs wall: %d", last, lk.Fence(), last-lk.Fence(), now.Sub(lastT), int64(lk.Fence())-now.UnixMicro())
				}
				last, lastT = lk.Fence(), now
				mu.Unlock()
				lk.Release(ctx)
			}
		})
	}
	wg.Wait()
}
