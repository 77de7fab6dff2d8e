package core_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
)

// MemoryStore.AcquireOrRecord looks for the record and takes the lock in
// one step, as the Redis script does: a holder's ReleaseRecording (record
// written, lock deleted, at once) can never leave a caller with a free key
// and no record, which would run the work a second time.
//
// Here A holds the key and records while B tries the key. B may legally
// find the key held (A has not released yet) or find A's record; B must
// never get the lock, since A's release and record are one step.
func TestMemoryAcquireOrRecordIsAtomic(t *testing.T) {
	store := core.NewMemoryStore()
	la := core.NewLocker(store)
	lb := core.NewLocker(store)
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	var bad atomic.Int64
	iters := 0
	for ; iters < 200000 && time.Now().Before(deadline) && bad.Load() == 0; iters++ {
		key := fmt.Sprintf("race-%d", iters)
		lkA, rec, err := la.TryObtainOrRecord(ctx, key)
		if err != nil || rec != nil {
			t.Fatalf("A: %v %q", err, rec)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			runtime.Gosched()
			if err := lkA.ReleaseRecording(ctx, []byte("v-first-run"), time.Minute); err != nil {
				t.Errorf("A record: %v", err)
			}
		}()
		go func() {
			defer wg.Done()
			<-start
			lkB, rec, err := lb.TryObtainOrRecord(ctx, key)
			if err == nil && lkB != nil {
				bad.Add(1)
				t.Errorf("iteration %d: B obtained the lock (record %q) though A released it only together with writing its record: the work runs twice", iters, rec)
				_ = lkB.Release(ctx)
			}
		}()
		close(start)
		wg.Wait()
	}
	t.Logf("%d iterations, %d double runs", iters, bad.Load())
}

// The same race seen through Once on two Lockers over one store: fn runs at
// most once per key.
func TestMemoryOnceRunsOnceUnderRace(t *testing.T) {
	store := core.NewMemoryStore()
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

// The same race on Redis, where the look-up and the acquire are one script.
func TestRedisOnceRunsOnceUnderRace(t *testing.T) {
	c := redistest.Start(t).Client(t)
	store := core.NewRedisStore(c)
	lockers := []*core.Locker{newLocker(store), newLocker(store), newLocker(store), newLocker(store)}
	ctx := context.Background()
	deadline := time.Now().Add(5 * time.Second)
	iters := 0
	for ; time.Now().Before(deadline); iters++ {
		key := fmt.Sprintf("once-%d", iters)
		var runs atomic.Int64
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, l := range lockers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if _, err := l.Once(ctx, key, time.Minute, func(context.Context) ([]byte, error) {
					runs.Add(1)
					return []byte("x"), nil
				}); err != nil {
					t.Errorf("Once: %v", err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if n := runs.Load(); n > 1 {
			t.Fatalf("key %s: fn ran %d times on Redis", key, n)
		}
	}
	t.Logf("%d keys, no double run", iters)
}
