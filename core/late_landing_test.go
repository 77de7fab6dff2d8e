package core_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/faultproxy"
	"github.com/reqlock/reqlock/internal/redistest"
)

// These tests delay real bytes between a real client and a real Redis: a
// command whose caller gave up may still land, after later commands
// succeeded, and no trust may rest on it not landing.

// proxied is a Redis reached two ways: through a fault proxy, and directly
// (the observer, which no fault touches).
type proxied struct {
	proxy  *faultproxy.Proxy
	via    *redis.Client
	direct *redis.Client
	// answered counts the commands via answered without error.
	answered *atomic.Int64
}

func startProxied(t *testing.T) proxied {
	t.Helper()
	srv := redistest.Start(t)
	p := faultproxy.Start(t, srv.Addr)
	via := redis.NewClient(redistest.ClientOptions(p.Addr()))
	t.Cleanup(func() { _ = via.Close() })
	// A connection's handshake is a command too: have one open before a
	// test holds "the next command".
	if err := via.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	px := proxied{proxy: p, via: via, direct: srv.Client(t), answered: new(atomic.Int64)}
	via.AddHook(commandHook{answered: func(_ redis.Cmder, err error) {
		if err == nil {
			px.answered.Add(1)
		}
	}})
	return px
}

// holdNext holds the next command sent through the proxy and returns a
// func that lets it land once the client has given up on it and closed its
// connection.
func (px proxied) holdNext(t *testing.T) (land func()) {
	t.Helper()
	h := px.proxy.HoldNext(faultproxy.Upstream)
	t.Cleanup(h.Release)
	return func() {
		t.Helper()
		waitCaptured(t, h, "command")
		select {
		case <-h.Conn().ClientClosed():
		case <-time.After(5 * time.Second):
			t.Fatal("the client kept the connection of the held command")
		}
		h.Release()
	}
}

// settle waits until Redis has run whatever a released hold let through:
// a command sent after it on the same server runs after it.
func settle(t *testing.T, c *redis.Client) {
	t.Helper()
	time.Sleep(50 * time.Millisecond)
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
}

// A Refresh to 1s times out while its command is held; a Refresh to 10s
// succeeds; then the first lands. Redis must keep the 10s lease the holder
// trusts: an extend never shortens it.
func TestDelayedRefreshDoesNotCutLongerLease(t *testing.T) {
	px := startProxied(t)
	l := newLocker(core.NewRedisStore(px.via), core.WithTTL(30*time.Second))
	ctx := ctxT(t, 20*time.Second)
	lk, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release(ctx)

	land := px.holdNext(t)
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := lk.Refresh(short, time.Second); !errors.Is(err, core.ErrUnavailable) {
		t.Fatalf("held Refresh: %v, want ErrUnavailable", err)
	}
	if err := lk.Refresh(ctx, 10*time.Second); err != nil {
		t.Fatalf("Refresh(10s): %v", err)
	}
	land()
	settle(t, px.direct)

	skey, _ := l.StoreKey("k")
	if left := px.direct.PTTL(ctx, skey).Val(); left < 9*time.Second {
		t.Fatalf("Redis keeps the lock %v after a late Refresh(1s) landed; the holder trusts 10s", left)
	}
}

// The same at the store, for a renewal the watchdog sent: Extend with a
// short lease lands after Extend with a long one.
func TestDelayedExtendDoesNotCutLongerLease(t *testing.T) {
	px := startProxied(t)
	st := core.NewRedisStore(px.via)
	ctx := ctxT(t, 20*time.Second)
	key := "reqlock:{extend-late}"
	if _, err := st.Acquire(ctx, core.Lease{Key: key, Token: "me", TTL: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	land := px.holdNext(t)
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if r := st.Extend(short, []core.Lease{{Key: key, Token: "me", TTL: time.Second}})[0]; r.Err == nil {
		t.Fatal("held Extend succeeded")
	}
	if r := st.Extend(ctx, []core.Lease{{Key: key, Token: "me", TTL: 10 * time.Second}})[0]; r.Err != nil {
		t.Fatalf("Extend(10s): %v", r.Err)
	}
	land()
	settle(t, px.direct)
	if left := px.direct.PTTL(ctx, key).Val(); left < 9*time.Second {
		t.Fatalf("Redis keeps the lock %v after a late Extend(1s) landed; Extend(10s) succeeded", left)
	}
}

// An acquire whose caller gave up is cleaned up before it lands: when it
// lands, it must not take the lock for nobody. A holder label, part of the
// token and so of the cancel marker's name, changes nothing.
func TestCancelledAcquireLandingLateTakesNothing(t *testing.T) {
	t.Run("plain", func(t *testing.T) { cancelledAcquireLandingLate(t) })
	t.Run("holder", func(t *testing.T) { cancelledAcquireLandingLate(t, core.WithHolder("pod-a")) })
}

func cancelledAcquireLandingLate(t *testing.T, opts ...core.Option) {
	px := startProxied(t)
	l := newLocker(core.NewRedisStore(px.via), append([]core.Option{core.WithTTL(10 * time.Second)}, opts...)...)
	ctx := ctxT(t, 20*time.Second)
	skey, _ := l.StoreKey("k")
	// Load the acquire script, so that the held EVALSHA runs when it lands
	// instead of failing with NOSCRIPT.
	warm, err := l.TryObtain(ctx, "warm-up")
	if err != nil {
		t.Fatal(err)
	}
	_ = warm.Release(ctx)

	land := px.holdNext(t)
	before := px.answered.Load()
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := l.TryObtain(short, "k"); !errors.Is(err, core.ErrUnavailable) {
		t.Fatalf("held acquire: %v, want ErrUnavailable", err)
	}
	// The clean-up runs in the background, over another connection.
	waitFor(t, "the clean-up to run", func() bool { return px.answered.Load() > before })
	land()
	settle(t, px.direct)
	if n := px.direct.Exists(ctx, skey).Val(); n != 0 {
		left := px.direct.PTTL(ctx, skey).Val()
		t.Fatalf("the late acquire took the lock for nobody, for %v", left)
	}
	// And the key is free for the next caller at once.
	lk, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatalf("next caller: %v", err)
	}
	_ = lk.Release(ctx)
}

// A release that fails (Redis unreachable) is retried in the background, so
// the key is free soon after Redis is back instead of at the end of the
// lease.
func TestFailedReleaseIsRetried(t *testing.T) {
	px := startProxied(t)
	l := newLocker(core.NewRedisStore(px.via), core.WithTTL(10*time.Second))
	ctx := ctxT(t, 20*time.Second)
	lk, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	px.proxy.Drop(faultproxy.Upstream) // a black hole: the release never lands
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := lk.Release(short); !errors.Is(err, core.ErrUnavailable) {
		t.Fatalf("Release into a black hole: %v, want ErrUnavailable", err)
	}
	px.proxy.Heal()
	skey, _ := l.StoreKey("k")
	waitFor(t, "the key to be freed", func() bool { return px.direct.Exists(ctx, skey).Val() == 0 })
}

// waitFor polls cond for up to 3s: what it waits for happens in the
// background, in well under that, or fails the test.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The same late-landing acquire, counted: one unavailable acquisition (a
// timed-out call is not "cancelled" nor "taken"), and no lock counted as
// held, before or after the bytes land.
func TestCancelledAcquireLandingLateIsCountedUnavailable(t *testing.T) {
	p := newProbe()
	cancelledAcquireLandingLate(t, core.WithTelemetry(p.telemetry()), core.WithHolder("pod-a"))
	unavailable := attribute.String("reqlock.outcome", "unavailable")
	if n := p.sum(t, "reqlock.lock.acquisitions", unavailable); n != 1 {
		t.Fatalf("%d unavailable acquisitions, want the one that timed out", n)
	}
	if n := p.sum(t, "reqlock.lock.held"); n != 0 {
		t.Fatalf("reqlock.lock.held = %d after every lock was released, want 0", n)
	}
	if n := p.sum(t, "reqlock.lock.lost"); n != 0 {
		t.Fatalf("%d locks counted lost, want none", n)
	}
}
