package lockertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

// eachRecordingStore runs f on every contract store that keeps records,
// and checks that the others refuse the record calls.
func eachRecordingStore(t *testing.T, stores []Store, f func(t *testing.T, s core.Store)) {
	Each(t, stores, func(t *testing.T, s core.Store, _ func(string)) {
		if _, ok := s.(store.Recorder); !ok {
			_, err := NewLocker(s).Once(Context(t, 5*time.Second), "k", 0, func(context.Context) ([]byte, error) { return nil, nil })
			if !errors.Is(err, core.ErrNoRecords) {
				t.Fatalf("Once on a store without records: %v, want ErrNoRecords", err)
			}
			return
		}
		f(t, s)
	})
}

// Many callers on several Lockers at once, then more later: fn runs once,
// and every caller gets its value.
func onceRunsOnceAndReplays(t *testing.T, stores []Store) {
	eachRecordingStore(t, stores, func(t *testing.T, s core.Store) {
		ctx := Context(t, 20*time.Second)
		var runs atomic.Int32
		fn := func(ctx context.Context) ([]byte, error) {
			runs.Add(1)
			time.Sleep(20 * time.Millisecond)
			return []byte("order-42"), nil
		}
		var wg sync.WaitGroup
		replays := atomic.Int32{}
		for i := range 8 {
			wg.Go(func() {
				l := NewLocker(s)
				out, err := l.Once(ctx, "charge:1", time.Minute, fn)
				if err != nil || string(out.Value) != "order-42" {
					t.Errorf("caller %d: %q, %v", i, out.Value, err)
				}
				if out.Replayed {
					replays.Add(1)
				}
			})
		}
		wg.Wait()
		out, err := NewLocker(s).Once(ctx, "charge:1", time.Minute, fn)
		if err != nil || !out.Replayed || string(out.Value) != "order-42" {
			t.Fatalf("later caller: %+v, %v", out, err)
		}
		if n := runs.Load(); n != 1 {
			t.Fatalf("fn ran %d times", n)
		}
		if n := replays.Load(); n != 7 {
			t.Fatalf("%d of 8 concurrent callers got a replay, want 7", n)
		}
	})
}

// What is not recorded leaves the key free for a retry; a Final error is
// recorded and handed back.
func onceRecordsOnlyAnswers(t *testing.T, stores []Store) {
	eachRecordingStore(t, stores, func(t *testing.T, s core.Store) {
		ctx := Context(t, 10*time.Second)
		l := NewLocker(s)
		transient := errors.New("upstream timed out")
		if _, err := l.Once(ctx, "k", 0, func(context.Context) ([]byte, error) { return nil, transient }); !errors.Is(err, transient) {
			t.Fatalf("transient: %v", err)
		}
		func() {
			defer func() { _ = recover() }()
			_, _ = l.Once(ctx, "k", 0, func(context.Context) ([]byte, error) { panic("boom") })
		}()
		declined := errors.New("card declined")
		out, err := l.Once(ctx, "k", 0, func(context.Context) ([]byte, error) { return []byte("d-1"), core.Final(declined) })
		if !errors.Is(err, declined) || out.Replayed {
			t.Fatalf("final, first run: %+v, %v", out, err)
		}
		out, err = l.Once(ctx, "k", 0, func(context.Context) ([]byte, error) {
			t.Fatal("ran after a recorded answer")
			return nil, nil
		})
		var rec *core.RecordedError
		if !errors.As(err, &rec) || !errors.Is(err, core.ErrRecorded) || rec.Message != "card declined" ||
			!out.Replayed || string(out.Value) != "d-1" {
			t.Fatalf("final, replayed: %+v, %v", out, err)
		}
	})
}

// Records expire with their retention; then fn runs again.
func onceRetentionExpires(t *testing.T, stores []Store) {
	eachRecordingStore(t, stores, func(t *testing.T, s core.Store) {
		ctx := Context(t, 10*time.Second)
		l := NewLocker(s)
		var runs atomic.Int32
		fn := func(context.Context) ([]byte, error) { return fmt.Appendf(nil, "run %d", runs.Add(1)), nil }
		if _, err := l.Once(ctx, "k", 100*time.Millisecond, fn); err != nil {
			t.Fatal(err)
		}
		if out, _ := l.Once(ctx, "k", 100*time.Millisecond, fn); !out.Replayed {
			t.Fatal("no replay within the retention")
		}
		time.Sleep(200 * time.Millisecond)
		if out, err := l.Once(ctx, "k", 100*time.Millisecond, fn); err != nil || out.Replayed || string(out.Value) != "run 2" {
			t.Fatalf("after the retention: %+v, %v", out, err)
		}
	})
}

// Only the lock's current holder writes the record: a holder that paused
// past its lease cannot overwrite the record of the holder after it.
func recordWrittenOnlyByHolder(t *testing.T, stores []Store) {
	eachRecordingStore(t, stores, func(t *testing.T, s core.Store) {
		ctx := Context(t, 10*time.Second)
		r := s.(store.Recorder)
		key := "reqlock:{fenced-record}"
		if _, err := s.Acquire(ctx, store.Lease{Key: key, Token: "paused", TTL: 50 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(80 * time.Millisecond) // its lease runs out
		if _, err := s.Acquire(ctx, store.Lease{Key: key, Token: "next", TTL: time.Second}); err != nil {
			t.Fatal(err)
		}
		if err := r.ReleaseRecording(ctx, key, "next", []byte("next's"), time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := r.ReleaseRecording(ctx, key, "paused", []byte("paused's"), time.Minute); !errors.Is(err, core.ErrNotHeld) {
			t.Fatalf("stale holder's record: %v, want ErrNotHeld", err)
		}
		_, rec, err := r.AcquireOrRecord(ctx, store.Lease{Key: key, Token: "later", TTL: time.Second})
		if err != nil || !bytes.Equal(rec, []byte("next's")) {
			t.Fatalf("record %q, %v; want next's", rec, err)
		}
	})
}
