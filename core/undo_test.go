package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/lockertest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
	"go.opentelemetry.io/otel/attribute"
)

// An acquire whose caller gave up is cleaned up before it lands: when it
// lands, it must not take the lock for nobody. A holder label, part of the
// token and so of the cancel marker's name, changes nothing.
func TestCancelledAcquireLandingLateTakesNothing(t *testing.T) {
	t.Run("plain", func(t *testing.T) { cancelledAcquireLandingLate(t) })
	t.Run("holder", func(t *testing.T) { cancelledAcquireLandingLate(t, core.WithHolder("pod-a")) })
}

func cancelledAcquireLandingLate(t *testing.T, opts ...core.Option) {
	px := redistest.StartProxied(t)
	l := newLocker(redisstore.New(px.Via), append([]core.Option{core.WithTTL(10 * time.Second)}, opts...)...)
	ctx := ctxT(t, 20*time.Second)
	skey, _ := l.StoreKey("k")
	// Load the acquire script, so that the held EVALSHA runs when it lands
	// instead of failing with NOSCRIPT.
	warm, err := l.TryObtain(ctx, "warm-up")
	if err != nil {
		t.Fatal(err)
	}
	_ = warm.Release(ctx)

	land := px.HoldNext(t)
	before := px.Answered.Load()
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := l.TryObtain(short, "k"); !errors.Is(err, core.ErrUnavailable) {
		t.Fatalf("held acquire: %v, want ErrUnavailable", err)
	}
	// The clean-up runs in the background, over another connection.
	lockertest.WaitFor(t, "the clean-up to run", func() bool { return px.Answered.Load() > before })
	land()
	redistest.Settle(t, px.Direct)
	if n := px.Direct.Exists(ctx, skey).Val(); n != 0 {
		left := px.Direct.PTTL(ctx, skey).Val()
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
	px := redistest.StartProxied(t)
	l := newLocker(redisstore.New(px.Via), core.WithTTL(10*time.Second))
	ctx := ctxT(t, 20*time.Second)
	lk, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	px.Proxy.Drop(faultproxy.Upstream) // a black hole: the release never lands
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := lk.Release(short); !errors.Is(err, core.ErrUnavailable) {
		t.Fatalf("Release into a black hole: %v, want ErrUnavailable", err)
	}
	px.Proxy.Heal()
	skey, _ := l.StoreKey("k")
	lockertest.WaitFor(t, "the key to be freed", func() bool { return px.Direct.Exists(ctx, skey).Val() == 0 })
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
