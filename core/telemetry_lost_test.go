package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/lockertest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore"
)

// logLines decodes the JSON log lines with message msg.
func logLines(t *testing.T, b *logBuffer, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(b.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// checkLostLine finds the one "lock lost" line and checks its level and
// attributes: the hashed key, never the raw one.
func checkLostLine(t *testing.T, b *logBuffer, l *core.Locker, key string, lk *core.Lock, why string) {
	t.Helper()
	lines := logLines(t, b, "reqlock: lock lost")
	if len(lines) != 1 {
		t.Fatalf("%d lock-lost lines, want 1:\n%s", len(lines), b)
	}
	skey, _ := l.StoreKey(key)
	m := lines[0]
	if m["level"] != "ERROR" || m["reqlock.store_key"] != skey || m["reqlock.fence"] != float64(lk.Fence()) || m["reqlock.reason"] != why {
		t.Errorf("lock-lost line %v; want level ERROR, reqlock.store_key %s, reqlock.fence %d, reqlock.reason %s", m, skey, lk.Fence(), why)
	}
	if strings.Contains(b.String(), key) {
		t.Errorf("the raw key %q reached the log:\n%s", key, b)
	}
}

// event returns the span's events named name.
func events(s sdktrace.ReadOnlySpan, name string) []sdktrace.Event {
	var out []sdktrace.Event
	for _, e := range s.Events() {
		if e.Name == name {
			out = append(out, e)
		}
	}
	return out
}

func checkLostEvent(t *testing.T, req sdktrace.ReadOnlySpan, lk *core.Lock, why string) {
	t.Helper()
	evs := events(req, "reqlock.lock_lost")
	if len(evs) != 1 {
		t.Fatalf("%d lock_lost events on the request span, want 1", len(evs))
	}
	if v, _ := attr(evs[0].Attributes, "reqlock.fence"); v.AsInt64() != int64(lk.Fence()) {
		t.Errorf("lock_lost fence %v, want %d", v.Emit(), lk.Fence())
	}
	if v, _ := attr(evs[0].Attributes, "reqlock.reason"); v.AsString() != why {
		t.Errorf("lock_lost reason %q, want %s", v.AsString(), why)
	}
}

// checkLostMetrics: one loss for why, the hold ended lost, nothing held.
func checkLostMetrics(t *testing.T, p *probe, store attribute.KeyValue, why string) {
	t.Helper()
	if got := p.sum(t, "reqlock.lock.lost", store, reason(why)); got != 1 {
		t.Errorf("lost{%s} = %d, want 1", why, got)
	}
	if got := p.count(t, "reqlock.lock.hold.duration", store, outcome("lost")); got != 1 {
		t.Errorf("holds lost = %d, want 1", got)
	}
	if got := p.count(t, "reqlock.lock.hold.duration", store, outcome("released")); got != 0 {
		t.Errorf("holds released = %d, want 0", got)
	}
	if got := p.sum(t, "reqlock.lock.held", store); got != 0 {
		t.Errorf("held = %d, want 0", got)
	}
}

// A lease that runs out unrenewed: lost, logged at Error, an event on the
// request's span; the Release after it ends no second hold. (The store may
// still hold the key for a moment after our clock declared it lost, so that
// Release may find it or not.)
func TestTelemetryLostLeaseExpired(t *testing.T) {
	p := newProbe()
	var logs logBuffer
	l := core.NewLocker(memorystore.New(), core.WithTelemetry(p.telemetry()), core.WithoutWatchdog(),
		core.WithTTL(50*time.Millisecond), core.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	ctx, req := p.request(ctxT(t, 10*time.Second))
	const key = "order-42"
	lk, err := l.Obtain(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	<-lk.Lost()
	lockertest.WaitFor(t, "the lock-lost line", func() bool { return strings.Contains(logs.String(), "lock lost") })
	if err := lk.Release(ctx); err != nil && !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("Release after loss: %v", err)
	}
	req.End()
	checkLostMetrics(t, p, storeMemory, "lease_expired")
	checkLostLine(t, &logs, l, key, lk, "lease_expired")
	checkLostEvent(t, req.(sdktrace.ReadOnlySpan), lk, "lease_expired")
	if rel := p.ended("reqlock.release"); len(rel) != 1 {
		t.Fatalf("%d release spans", len(rel))
	} else if v, _ := attr(rel[0].Attributes, "reqlock.outcome"); v.AsString() != "not_held" && v.AsString() != "released" {
		t.Errorf("release after loss: outcome %q", v.AsString())
	}
}

// The watchdog renews (counted, batches timed, its lag measured), then
// finds the key deleted behind its back: lost, logged, an event.
func TestTelemetryRenewedThenLost(t *testing.T) {
	lockertest.Each(t, telemetryStores, func(t *testing.T, s core.Store, vanish func(string)) {
		p := newProbe()
		var logs logBuffer
		l := core.NewLocker(s, core.WithTelemetry(p.telemetry()), core.WithTTL(200*time.Millisecond),
			core.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
		store := storeAttr(t)
		ctx, req := p.request(ctxT(t, 10*time.Second))
		const key = "cart-7"
		lk, err := l.TryObtain(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		lockertest.WaitFor(t, "two renewals", func() bool { return p.sum(t, "reqlock.lock.renewals", store, outcome("renewed")) >= 2 })
		if got := p.count(t, "reqlock.watchdog.batch.duration", store, outcome("ok")); got < 2 {
			t.Errorf("batches ok = %d, want ≥ 2", got)
		}
		if got := p.count(t, "reqlock.watchdog.lag", store); got < 2 {
			t.Errorf("lags = %d, want ≥ 2", got)
		}
		skey, _ := l.StoreKey(key)
		vanish(skey)
		select {
		case <-lk.Lost():
		case <-ctx.Done():
			t.Fatal("the deleted lock was never declared lost")
		}
		lockertest.WaitFor(t, "the lock-lost line", func() bool { return strings.Contains(logs.String(), "lock lost") })
		req.End()
		if got := p.sum(t, "reqlock.lock.renewals", store, outcome("not_held")); got != 1 {
			t.Errorf("renewals not_held = %d, want 1", got)
		}
		checkLostMetrics(t, p, store, "renewal_not_held")
		checkLostLine(t, &logs, l, key, lk, "renewal_not_held")
		checkLostEvent(t, req.(sdktrace.ReadOnlySpan), lk, "renewal_not_held")
	})
}

// A paused redis-server: renewals fail (counted, logged at Debug, events on
// the request span) until the lease runs out by our clock.
func TestTelemetryRenewalFailed(t *testing.T) {
	srv := redistest.Start(t)
	p := newProbe()
	var logs logBuffer
	l := core.NewLocker(redisstore.New(srv.Client(t)), core.WithTelemetry(p.telemetry()),
		core.WithTTL(300*time.Millisecond),
		core.WithLogger(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	ctx, req := p.request(ctxT(t, 10*time.Second))
	const key = "invoice-9"
	lk, err := l.TryObtain(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	srv.Pause()
	select {
	case <-lk.Lost():
	case <-ctx.Done():
	}
	srv.Resume()
	if ctx.Err() != nil {
		t.Fatal("the lock was never declared lost")
	}
	lockertest.WaitFor(t, "the lock-lost line", func() bool { return strings.Contains(logs.String(), "lock lost") })
	req.End()
	if err := lk.Release(context.Background()); err != nil && !errors.Is(err, core.ErrNotHeld) {
		t.Errorf("Release after loss: %v", err)
	}

	if got := p.sum(t, "reqlock.lock.renewals", storeRedis, outcome("failed")); got < 1 {
		t.Errorf("renewals failed = %d, want ≥ 1", got)
	}
	if got := p.count(t, "reqlock.watchdog.batch.duration", storeRedis, outcome("failed")); got < 1 {
		t.Errorf("batches failed = %d, want ≥ 1", got)
	}
	checkLostMetrics(t, p, storeRedis, "lease_expired")
	checkLostLine(t, &logs, l, key, lk, "lease_expired")
	rs := req.(sdktrace.ReadOnlySpan)
	checkLostEvent(t, rs, lk, "lease_expired")
	failed := events(rs, "reqlock.renewal_failed")
	if len(failed) < 1 {
		t.Fatal("no renewal_failed event on the request span")
	}
	if v, _ := attr(failed[0].Attributes, "reqlock.fence"); v.AsInt64() != int64(lk.Fence()) {
		t.Errorf("renewal_failed fence %v", v.Emit())
	}
	if v, _ := attr(failed[0].Attributes, "error"); v.AsString() == "" {
		t.Error("renewal_failed without its error")
	}
	skey, _ := l.StoreKey(key)
	retries := logLines(t, &logs, "reqlock: renewal failed, retrying")
	if len(retries) < 1 {
		t.Fatal("no retried-renewal line")
	}
	if m := retries[0]; m["level"] != "DEBUG" || m["reqlock.store_key"] != skey || m["reqlock.fence"] != float64(lk.Fence()) || m["error"] == nil {
		t.Errorf("retried-renewal line %v", m)
	}
}
