package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/lockertest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// FLUSHALL behind the holder's back: the next renewal finds the lock gone.
func TestRedisLostOnFlushAll(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	l := newLocker(redisstore.New(c), core.WithTTL(150*time.Millisecond))
	ctx := ctxT(t, 10*time.Second)
	err := l.Do(ctx, "k", func(ctx context.Context) error {
		if err := c.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		<-ctx.Done()
		return context.Cause(ctx)
	})
	if !errors.Is(err, core.ErrLockLost) {
		t.Fatalf("Do: %v, want ErrLockLost", err)
	}
}

// A killed server cannot renew: the lock is lost once its lease has run out
// by our own clock, not earlier and not never.
func TestRedisLostWhenServerKilled(t *testing.T) {
	srv := redistest.Start(t)
	l := newLocker(redisstore.New(srv.Client(t)), core.WithTTL(300*time.Millisecond))
	ctx := ctxT(t, 10*time.Second)
	lk, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	lctx, cancel := lk.WithContext(ctx)
	defer cancel()
	killed := time.Now()
	srv.Kill()
	select {
	case <-lk.Lost():
	case <-time.After(5 * time.Second):
		t.Fatal("Lost did not fire after the server died")
	}
	if since := time.Since(killed); since > 300*time.Millisecond+time.Second {
		t.Errorf("Lost fired %v after the kill; the lease was 300ms", since)
	}
	<-lctx.Done()
	if !errors.Is(context.Cause(lctx), core.ErrLockLost) {
		t.Fatalf("cause %v, want ErrLockLost", context.Cause(lctx))
	}
	if err := lk.Release(context.Background()); !errors.Is(err, core.ErrUnavailable) {
		t.Fatalf("Release on a dead server: %v, want ErrUnavailable", err)
	}
}

// A server that hangs (SIGSTOP) must not hang Obtain past its context.
func TestRedisPausedServerObtainBounded(t *testing.T) {
	srv := redistest.Start(t)
	l := newLocker(redisstore.New(srv.Client(t)))
	warm, err := l.TryObtain(ctxT(t, 5*time.Second), "warm-up")
	if err != nil {
		t.Fatal(err)
	}
	warm.Release(context.Background())

	srv.Pause()
	defer srv.Resume()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = l.Obtain(ctx, "k")
	elapsed := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, core.ErrUnavailable) {
		t.Fatalf("Obtain on a paused server: %v, want ErrUnavailable and DeadlineExceeded", err)
	}
	if elapsed > 2*time.Second { // the client's own read timeout; the ctx said 200ms
		t.Fatalf("Obtain took %v with a 200ms context", elapsed)
	}
}

// A Redis that is not there at all answers at once, as a store failure.
func TestRedisDownIsUnavailable(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	srv.Kill()
	_, err := newLocker(redisstore.New(c)).Obtain(ctxT(t, 5*time.Second), "k")
	if !errors.Is(err, core.ErrUnavailable) || errors.Is(err, core.ErrNotObtained) {
		t.Fatalf("Obtain with Redis down: %v, want ErrUnavailable only", err)
	}
}

// A retried acquire (first reply lost) finds its own token and succeeds
// instead of reporting its own lock as taken.
func TestRedisAcquireIsIdempotent(t *testing.T) {
	s := redisstore.New(redistest.Start(t).Client(t))
	ctx := ctxT(t, 5*time.Second)
	lease := store.Lease{Key: "reqlock:{retry}", Token: "tok", TTL: time.Second}
	g1, err := s.Acquire(ctx, lease)
	if err != nil {
		t.Fatal(err)
	}
	g2, err := s.Acquire(ctx, lease)
	if err != nil {
		t.Fatalf("retried acquire: %v", err)
	}
	if g2.Fence <= g1.Fence {
		t.Fatalf("retried acquire fence %d not above %d", g2.Fence, g1.Fence)
	}
	if _, err := s.Acquire(ctx, store.Lease{Key: lease.Key, Token: "other", TTL: time.Second}); !errors.Is(err, core.ErrNotObtained) {
		t.Fatalf("other token: %v, want ErrNotObtained", err)
	}
}

// Only prefix{hash} keys (and their fence counters) ever reach Redis.
func TestRedisKeysStayInNamespace(t *testing.T) {
	c := redistest.Start(t).Client(t)
	l := newLocker(redisstore.New(c), core.WithPrefix("app:"))
	ctx := ctxT(t, 5*time.Second)
	for _, k := range []string{"*", "{x}", "a\nb", "\xff", "user:1"} {
		lk, err := l.TryObtain(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		defer lk.Release(ctx)
	}
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 10 {
		t.Fatalf("%d keys in Redis, want 5 locks + 5 counters: %q", len(keys), keys)
	}
	for _, k := range keys {
		if !lockertest.StoreKeyWithPrefix("app:").MatchString(k) {
			t.Fatalf("key %q escaped the namespace", k)
		}
	}
}

// The watchdog renews every held lock in one batch per tick: one round trip
// for fifty locks, not fifty.
func TestRedisWatchdogBatchesRenewals(t *testing.T) {
	c := redistest.Start(t).Client(t)
	var trips roundTrips
	c.AddHook(&trips)
	l := newLocker(redisstore.New(c), core.WithTTL(300*time.Millisecond))
	ctx := ctxT(t, 10*time.Second)
	var held []*core.Lock
	for i := range 50 {
		lk, err := l.TryObtain(ctx, fmt.Sprint("job-", i))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, lk)
		time.Sleep(time.Millisecond) // spread the leases a little
	}
	trips.reset()
	time.Sleep(time.Second)
	for _, lk := range held {
		select {
		case <-lk.Lost():
			t.Fatalf("lock %s lost", lk.Key())
		default:
		}
	}
	rt, cmds, biggest := trips.snapshot()
	if cmds < 3*50 {
		t.Fatalf("%d renewals in a second of 300ms leases for 50 locks", cmds)
	}
	if biggest < 40 || rt > cmds/10 {
		t.Fatalf("%d renewals took %d round trips (largest batch %d): not batched", cmds, rt, biggest)
	}
	for _, lk := range held {
		if err := lk.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// roundTrips counts script round trips as a go-redis hook sees them.
type roundTrips struct {
	mu               sync.Mutex
	trips, cmds, max int
}

func (r *roundTrips) reset() { r.mu.Lock(); r.trips, r.cmds, r.max = 0, 0, 0; r.mu.Unlock() }

func (r *roundTrips) snapshot() (trips, cmds, max int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.trips, r.cmds, r.max
}

func (r *roundTrips) record(n int) {
	r.mu.Lock()
	r.trips++
	r.cmds += n
	r.max = max(r.max, n)
	r.mu.Unlock()
}

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if strings.HasPrefix(cmd.Name(), "eval") {
			r.record(1)
		}
		return next(ctx, cmd)
	}
}

func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.record(len(cmds))
		return next(ctx, cmds)
	}
}

// With an attempt timeout, a wait with no deadline of its own still notices
// a hung store at once instead of hanging with it.
func TestRedisAttemptTimeoutBoundsEachTry(t *testing.T) {
	srv := redistest.Start(t)
	l := newLocker(redisstore.New(srv.Client(t)))
	held, err := l.TryObtain(ctxT(t, 5*time.Second), "k")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(context.Background())

	srv.Pause()
	defer srv.Resume()
	ctx := core.ContextWithAttemptTimeout(context.Background(), 100*time.Millisecond)
	_, err = newLocker(redisstore.New(srv.Client(t)), core.WithAttemptTimeout(time.Hour)).Obtain(ctx, "k")
	if !errors.Is(err, core.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Obtain on a paused server: %v, want ErrUnavailable with DeadlineExceeded", err)
	}
}

// BenchmarkWatchdogAtScale holds 10,000 locks with one Locker and counts
// what keeping them costs: round trips and allocations per renewal tick (a
// third of the lease), and renewals per lock.
func BenchmarkWatchdogAtScale(b *testing.B) {
	c := redistest.Start(b).Client(b)
	var trips roundTrips
	c.AddHook(&trips)
	const n, ttl = 10000, 3 * time.Second
	l := newLocker(redisstore.New(c), core.WithTTL(ttl))
	ctx := context.Background()
	held := make([]*core.Lock, n)
	for i := range held {
		lk, err := l.TryObtain(ctx, fmt.Sprint("job-", i))
		if err != nil {
			b.Fatal(err)
		}
		held[i] = lk
	}
	defer func() {
		for _, lk := range held {
			_ = lk.Release(ctx)
		}
	}()
	for range b.N {
		trips.reset()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		const ticks = 3
		time.Sleep(ticks * ttl / 3)
		runtime.ReadMemStats(&after)
		rt, cmds, biggest := trips.snapshot()
		for _, lk := range held {
			select {
			case <-lk.Lost():
				b.Fatalf("lock %s lost", lk.Key())
			default:
			}
		}
		b.ReportMetric(float64(rt)/ticks, "trips/tick")
		b.ReportMetric(float64(cmds)/n/ticks, "renewals/lock/tick")
		b.ReportMetric(float64(biggest), "largest-batch")
		b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(cmds), "allocs/renewal")
	}
}

// A client that ignores context deadlines is named once, at construction.
func TestNewRedisStoreWarnsWithoutContextTimeout(t *testing.T) {
	var logged strings.Builder
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
	defer slog.SetDefault(prev)

	addr := redistest.Start(t).Addr
	good := redis.NewClient(redistest.ClientOptions(addr))
	defer good.Close()
	redisstore.New(good)
	if logged.Len() != 0 {
		t.Fatalf("warned about a client with ContextTimeoutEnabled: %s", logged.String())
	}
	opts := redistest.ClientOptions(addr)
	opts.ContextTimeoutEnabled = false
	bad := redis.NewClient(opts)
	defer bad.Close()
	redisstore.New(bad)
	redisstore.New(bad)
	if n := strings.Count(logged.String(), "level=WARN"); n != 1 {
		t.Fatalf("%d warnings for one client without ContextTimeoutEnabled, want 1:\n%s", n, logged.String())
	}
}
