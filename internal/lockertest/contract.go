package lockertest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/redisstore/redlock"
)

// Many goroutines on several Lockers contend for one key: never two inside,
// and every holder's fence is above the one before, where the store's fence
// is a fencing token (not Redlock's: its fences come from several nodes'
// counters and the acquirers' clocks, and only almost always grow; see
// redlock.Store).
func contractMutualExclusion(t *testing.T, stores []Store) {
	Each(t, stores, func(t *testing.T, s core.Store, _ func(string)) {
		_, redlock := s.(*redlock.Store)
		lockers := make([]*core.Locker, 3)
		for i := range lockers {
			lockers[i] = NewLocker(s, core.WithTTL(time.Second),
				core.WithRetry(backoff.Exponential(time.Millisecond, 20*time.Millisecond)))
		}
		var inside atomic.Int32
		var mu sync.Mutex
		var lastFence uint64
		var entries atomic.Int32
		var wg sync.WaitGroup
		ctx := Context(t, 30*time.Second)
		for g := range 24 {
			wg.Go(func() {
				l := lockers[g%len(lockers)]
				for range 5 {
					err := l.Do(ctx, "order-42", func(ctx context.Context) error {
						if n := inside.Add(1); n != 1 {
							t.Errorf("%d holders inside at once", n)
						}
						lk, _ := core.FromContext(ctx)
						mu.Lock()
						if lk.Fence() <= lastFence && !redlock {
							t.Errorf("fence went from %d to %d", lastFence, lk.Fence())
						}
						lastFence = lk.Fence()
						mu.Unlock()
						time.Sleep(100 * time.Microsecond)
						inside.Add(-1)
						entries.Add(1)
						return nil
					})
					if err != nil {
						t.Errorf("Do: %v", err)
						return
					}
				}
			})
		}
		wg.Wait()
		if got := entries.Load(); got != 24*5 {
			t.Fatalf("%d entries, want %d", got, 24*5)
		}
	})
}

func contractTryObtainConflict(t *testing.T, stores []Store) {
	Each(t, stores, func(t *testing.T, s core.Store, _ func(string)) {
		ctx := Context(t, 10*time.Second)
		a, b := NewLocker(s, core.WithTTL(2*time.Second)), NewLocker(s)
		lk, err := a.TryObtain(ctx, "user:1")
		if err != nil {
			t.Fatal(err)
		}
		defer lk.Release(ctx)

		_, err = b.TryObtain(ctx, "user:1")
		if !errors.Is(err, core.ErrNotObtained) {
			t.Fatalf("second TryObtain: %v, want ErrNotObtained", err)
		}
		left, ok := core.HolderTTL(err)
		if !ok || left <= 0 || left > 2*time.Second {
			t.Fatalf("holder TTL %v (ok=%v), want within (0, 2s]", left, ok)
		}
		// Another key is independent.
		other, err := b.TryObtain(ctx, "user:2")
		if err != nil {
			t.Fatalf("other key: %v", err)
		}
		other.Release(ctx)
	})
}

// A holder whose lease ran out and was taken over cannot release the new
// holder's lock.
func contractStaleReleaseFreesNothing(t *testing.T, stores []Store) {
	Each(t, stores, func(t *testing.T, s core.Store, _ func(string)) {
		ctx := Context(t, 10*time.Second)
		short := NewLocker(s, core.WithTTL(50*time.Millisecond), core.WithoutWatchdog())
		old, err := short.TryObtain(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		<-old.Lost() // the lease ran out by our clock
		current, err := NewLocker(s).Obtain(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		defer current.Release(ctx)

		if err := old.Release(ctx); !errors.Is(err, core.ErrNotHeld) {
			t.Fatalf("stale Release: %v, want ErrNotHeld", err)
		}
		if err := old.Refresh(ctx, time.Second); !errors.Is(err, core.ErrNotHeld) {
			t.Fatalf("stale Refresh: %v, want ErrNotHeld", err)
		}
		if _, err := current.TTL(ctx); err != nil {
			t.Fatalf("current holder lost its lock: %v", err)
		}
		if _, err := NewLocker(s).TryObtain(ctx, "k"); !errors.Is(err, core.ErrNotObtained) {
			t.Fatalf("lock free after stale release: %v", err)
		}
	})
}

func contractWatchdogKeepsShortLease(t *testing.T, stores []Store) {
	Each(t, stores, func(t *testing.T, s core.Store, _ func(string)) {
		ctx := Context(t, 10*time.Second)
		l := NewLocker(s, core.WithTTL(300*time.Millisecond))
		lk, err := l.TryObtain(ctx, "long-job")
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.After(2 * time.Second) // almost seven leases
		for done := false; !done; {
			select {
			case <-lk.Lost():
				t.Fatal("watchdog let the lock go")
			case <-deadline:
				done = true
			case <-time.After(100 * time.Millisecond):
				if _, err := NewLocker(s).TryObtain(ctx, "long-job"); !errors.Is(err, core.ErrNotObtained) {
					t.Fatalf("someone else got the lock: %v", err)
				}
			}
		}
		if left, err := lk.TTL(ctx); err != nil || left <= 0 || left > 300*time.Millisecond {
			t.Fatalf("TTL = %v, %v", left, err)
		}
		if err := lk.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if err := lk.Release(ctx); !errors.Is(err, core.ErrNotHeld) {
			t.Fatalf("second Release: %v, want ErrNotHeld", err)
		}
	})
}

// Release wakes a waiter of the same Locker at once, long before its
// backoff would have.
func contractReleaseWakesWaiter(t *testing.T, stores []Store) {
	Each(t, stores, func(t *testing.T, s core.Store, _ func(string)) {
		ctx := Context(t, 10*time.Second)
		l := NewLocker(s, core.WithRetry(backoff.Constant(time.Minute)))
		held, err := l.Obtain(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		go func() {
			lk, err := l.Obtain(ctx, "k")
			if err == nil {
				err = lk.Release(ctx)
			}
			got <- err
		}()
		time.Sleep(50 * time.Millisecond) // let the waiter queue up
		if err := held.Release(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-got:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second): // the backoff alone would take 30s or more
			t.Fatal("waiter was not woken by the release")
		}
	})
}

func contractObtainHonoursContext(t *testing.T, stores []Store) {
	Each(t, stores, func(t *testing.T, s core.Store, _ func(string)) {
		ctx := Context(t, 10*time.Second)
		l := NewLocker(s)
		held, err := l.Obtain(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		defer held.Release(ctx)

		short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		_, err = NewLocker(s).Obtain(short, "k")
		if !errors.Is(err, core.ErrNotObtained) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Obtain past deadline: %v, want ErrNotObtained and DeadlineExceeded", err)
		}

		cancelled, cancel := context.WithCancel(ctx)
		go func() { time.Sleep(50 * time.Millisecond); cancel() }()
		_, err = l.Obtain(cancelled, "k")
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Obtain cancelled: %v, want context.Canceled", err)
		}

		_, err = NewLocker(s, core.WithRetry(backoff.Limit(backoff.Constant(time.Millisecond), 3))).Obtain(ctx, "k")
		if !errors.Is(err, core.ErrNotObtained) || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Obtain out of retries: %v, want ErrNotObtained alone", err)
		}
	})
}

func contractLostWhenKeyVanishes(t *testing.T, stores []Store) {
	Each(t, stores, func(t *testing.T, s core.Store, vanish func(string)) {
		ctx := Context(t, 10*time.Second)
		l := NewLocker(s, core.WithTTL(150*time.Millisecond))
		skey, _ := l.StoreKey("k")
		err := l.Do(ctx, "k", func(ctx context.Context) error {
			vanish(skey)
			<-ctx.Done() // the next renewal finds the key gone
			if cause := context.Cause(ctx); !errors.Is(cause, core.ErrLockLost) {
				t.Errorf("cause = %v, want ErrLockLost", cause)
			}
			lk, _ := core.FromContext(ctx)
			<-lk.Lost()
			return ctx.Err()
		})
		if !errors.Is(err, core.ErrLockLost) {
			t.Fatalf("Do: %v, want ErrLockLost", err)
		}
	})
}

func contractWithoutWatchdogExpires(t *testing.T, stores []Store) {
	Each(t, stores, func(t *testing.T, s core.Store, _ func(string)) {
		ctx := Context(t, 10*time.Second)
		l := NewLocker(s, core.WithTTL(100*time.Millisecond), core.WithoutWatchdog())
		lk, err := l.TryObtain(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		if err := lk.Refresh(ctx, 200*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		<-lk.Lost()
		if _, err := lk.TTL(ctx); !errors.Is(err, core.ErrNotHeld) {
			t.Fatalf("TTL after expiry: %v, want ErrNotHeld", err)
		}
		if err := lk.Refresh(ctx, time.Millisecond); err == nil || errors.Is(err, core.ErrNotHeld) {
			t.Fatalf("Refresh below MinTTL: %v, want a clear error", err)
		}
	})
}

func contractDoReleasesOnPanic(t *testing.T, stores []Store) {
	Each(t, stores, func(t *testing.T, s core.Store, _ func(string)) {
		ctx := Context(t, 10*time.Second)
		l := NewLocker(s)
		func() {
			defer func() {
				if r := recover(); r != "boom" {
					t.Fatalf("recovered %v, want the handler's panic", r)
				}
			}()
			_ = l.Do(ctx, "k", func(context.Context) error { panic("boom") })
		}()
		lk, err := l.TryObtain(ctx, "k")
		if err != nil {
			t.Fatalf("lock left behind by a panic: %v", err)
		}
		lk.Release(ctx)
	})
}

// A caller whose context is cancelled while fn runs still releases.
func contractDoReleasesAfterCancel(t *testing.T, stores []Store) {
	Each(t, stores, func(t *testing.T, s core.Store, _ func(string)) {
		l := NewLocker(s)
		ctx, cancel := context.WithCancel(context.Background())
		err := l.Do(ctx, "k", func(context.Context) error { cancel(); return nil })
		if err != nil {
			t.Fatal(err)
		}
		lk, err := l.TryObtain(Context(t, 5*time.Second), "k")
		if err != nil {
			t.Fatalf("lock left behind by a cancelled caller: %v", err)
		}
		lk.Release(context.Background())
	})
}

func contractBadKeys(t *testing.T, stores []Store) {
	Each(t, stores, func(t *testing.T, s core.Store, _ func(string)) {
		ctx := Context(t, 10*time.Second)
		l := NewLocker(s)
		if _, err := l.TryObtain(ctx, ""); !errors.Is(err, core.ErrEmptyKey) {
			t.Fatalf("empty key: %v, want ErrEmptyKey", err)
		}
		if _, err := l.Obtain(ctx, ""); !errors.Is(err, core.ErrEmptyKey) {
			t.Fatalf("empty key: %v, want ErrEmptyKey", err)
		}
		hostile := []string{
			strings.Repeat("x", 1<<20),
			"{}", "{a}", "}{", "*", "a\nb\r\n", "\xff\xfe\x00", "reqlock:{abc}", "../../etc",
			"{" + strings.Repeat("z", 40) + "}", "key with spaces",
		}
		var held []*core.Lock
		for _, k := range hostile {
			lk, err := l.TryObtain(ctx, k)
			if err != nil {
				t.Fatalf("key %.20q: %v", k, err)
			}
			held = append(held, lk)
		}
		// Each is a lock of its own: none blocks another.
		for _, lk := range held {
			if err := lk.Release(ctx); err != nil {
				t.Fatalf("release %.20q: %v", lk.Key(), err)
			}
		}
	})
}

// countingStore counts acquire round trips.
type countingStore struct {
	core.Store
	acquires atomic.Int64
}

func (s *countingStore) Acquire(ctx context.Context, l store.Lease) (store.Grant, error) {
	s.acquires.Add(1)
	return s.Store.Acquire(ctx, l)
}

// ObtainAfter waits from a caller's failed attempt without repeating it at
// once, and gets the lock when it is released.
func contractObtainAfterSkipsTheRepeat(t *testing.T, stores []Store) {
	Each(t, stores, func(t *testing.T, s core.Store, _ func(string)) {
		ctx := Context(t, 10*time.Second)
		cs := &countingStore{Store: s}
		held, err := NewLocker(s).TryObtain(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		l := NewLocker(cs, core.WithRetry(backoff.Limit(backoff.Constant(10*time.Millisecond), 0)))
		_, taken := l.TryObtain(ctx, "k")
		if _, err := l.ObtainAfter(ctx, "k", taken); !errors.Is(err, core.ErrNotObtained) {
			t.Fatalf("ObtainAfter with no retries left: %v, want ErrNotObtained", err)
		}
		if n := cs.acquires.Load(); n != 1 {
			t.Fatalf("%d acquires; want only the caller's own", n)
		}

		waiter := NewLocker(cs, core.WithRetry(backoff.Constant(20*time.Millisecond)))
		got := make(chan error, 1)
		go func() {
			lk, err := waiter.ObtainAfter(ctx, "k", taken)
			if err == nil {
				err = lk.Release(ctx)
			}
			got <- err
		}()
		time.Sleep(50 * time.Millisecond)
		if err := held.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-got; err != nil {
			t.Fatalf("ObtainAfter: %v", err)
		}
	})
}
