package memorystore_test

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/memorystore"
)

// memorystore.Store.AcquireOrRecord looks for the record and takes the lock in
// one step, as the Redis script does: a holder's ReleaseRecording (record
// written, lock deleted, at once) can never leave a caller with a free key
// and no record, which would run the work a second time.
//
// Here A holds the key and records while B tries the key. B may legally
// find the key held (A has not released yet) or find A's record; B must
// never get the lock, since A's release and record are one step.
func TestMemoryAcquireOrRecordIsAtomic(t *testing.T) {
	st := memorystore.New()
	la := core.NewLocker(st)
	lb := core.NewLocker(st)
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

// The memory store's records stay within their byte limit: the oldest go.
func TestMemoryRecordsBounded(t *testing.T) {
	s := memorystore.New().WithRecordBytes(1000)
	ctx := ctxT(t, 10*time.Second)
	l := newLocker(s)
	value := bytes.Repeat([]byte("x"), 100)
	for i := range 50 {
		if _, err := l.Once(ctx, fmt.Sprint("k", i), time.Hour, func(context.Context) ([]byte, error) { return value, nil }); err != nil {
			t.Fatal(err)
		}
	}
	kept := 0
	for i := range 50 {
		skey, _ := l.StoreKey(fmt.Sprint("k", i))
		if _, rec, _ := s.AcquireOrRecord(ctx, store.Lease{Key: skey, Token: "probe", TTL: time.Second}); rec != nil {
			kept++
		} else {
			_ = s.Release(ctx, skey, "probe")
		}
	}
	if kept == 0 || kept*(100+30) > 1000 {
		t.Fatalf("%d records kept under a 1000-byte limit", kept)
	}
}
