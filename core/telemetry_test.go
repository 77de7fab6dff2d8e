package core_test

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/lockertest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore"
)

// telemetryStores are the stores the telemetry checks run on: each kind
// of store names itself in reqlock.store, and a real redis-server times
// its answers.
var telemetryStores = []lockertest.Store{lockertest.Memory(), lockertest.Redis(), lockertest.Cluster(), lockertest.Redlock()}

// Every acquire outcome a store answers, and the end of each hold, on the
// memory store and a real redis-server: counted, timed, spanned.
func TestTelemetryAcquireOutcomes(t *testing.T) {
	lockertest.Each(t, telemetryStores, func(t *testing.T, s core.Store, _ func(string)) {
		p := newProbe()
		l := newLocker(s, core.WithTelemetry(p.telemetry()))
		store := storeAttr(t)
		records := l.KeepsRecords()
		ctx := ctxT(t, 10*time.Second)

		// obtained (try), then taken (try) and taken (wait, its deadline ran out).
		lk, err := l.TryObtain(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		if got := p.sum(t, "reqlock.lock.held", store); got != 1 {
			t.Errorf("held while holding = %d, want 1", got)
		}
		if _, err := l.TryObtain(ctx, "k"); !errors.Is(err, core.ErrNotObtained) {
			t.Fatalf("second TryObtain: %v", err)
		}
		wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		if _, err := l.Obtain(wctx, "k"); !errors.Is(err, core.ErrNotObtained) {
			t.Fatalf("Obtain past its deadline: %v", err)
		}
		cancel()
		// cancelled: the caller goes away while waiting.
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(30*time.Millisecond, cancel)
		if _, err := l.Obtain(cctx, "k"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Obtain cancelled: %v", err)
		}
		if err := lk.Release(ctx); err != nil {
			t.Fatal(err)
		}
		// released twice: the second is not_held and ends no hold.
		if err := lk.Release(ctx); !errors.Is(err, core.ErrNotHeld) {
			t.Fatalf("second Release: %v", err)
		}

		// obtained (wait) then, where the store keeps records, recorded
		// (try and wait).
		recorded := int64(0)
		if records {
			recorded = 1
			lk, rec, err := l.ObtainOrRecord(ctx, "r")
			if err != nil || rec != nil {
				t.Fatal(rec, err)
			}
			if err := lk.ReleaseRecording(ctx, []byte("done"), time.Minute); err != nil {
				t.Fatal(err)
			}
			if _, rec, err := l.TryObtainOrRecord(ctx, "r"); err != nil || string(rec) != "done" {
				t.Fatal(rec, err)
			}
			if _, rec, err := l.ObtainOrRecord(ctx, "r"); err != nil || string(rec) != "done" {
				t.Fatal(rec, err)
			}
		} else {
			lk, err := l.Obtain(ctx, "r")
			if err != nil {
				t.Fatal(err)
			}
			if err := lk.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
		// refused: counted nowhere.
		if _, err := l.TryObtain(ctx, ""); !errors.Is(err, core.ErrEmptyKey) {
			t.Fatal(err)
		}

		const acq, wait = "reqlock.lock.acquisitions", "reqlock.lock.wait.duration"
		for _, c := range []struct {
			mode, outcome string
			want          int64
		}{
			{"try", "obtained", 1}, {"try", "taken", 1}, {"try", "recorded", recorded},
			{"wait", "obtained", 1}, {"wait", "taken", 1}, {"wait", "cancelled", 1}, {"wait", "recorded", recorded},
			{"try", "unavailable", 0}, {"wait", "unavailable", 0}, {"try", "cancelled", 0},
		} {
			if got := p.sum(t, acq, store, modeOf(c.mode), outcome(c.outcome)); got != c.want {
				t.Errorf("%s{%s,%s} = %d, want %d", acq, c.mode, c.outcome, got, c.want)
			}
			if got := p.count(t, wait, store, modeOf(c.mode), outcome(c.outcome)); got != uint64(c.want) {
				t.Errorf("%s{%s,%s} count = %d, want %d", wait, c.mode, c.outcome, got, c.want)
			}
		}
		if got, want := p.sum(t, acq), 5+2*recorded; got != want {
			t.Errorf("acquisitions in all = %d, want %d (the refused call counts nowhere)", got, want)
		}
		if got := p.count(t, "reqlock.lock.hold.duration", store, outcome("released")); got != 2 {
			t.Errorf("holds released = %d, want 2", got)
		}
		if got := p.sum(t, "reqlock.lock.held", store); got != 0 {
			t.Errorf("held after release = %d, want 0", got)
		}

		// The spans say the same.
		acquires := p.ended("reqlock.acquire")
		if want := 6 + 2*recorded; int64(len(acquires)) != want {
			t.Fatalf("%d acquire spans, want %d", len(acquires), want)
		}
		first := acquires[0]
		if v, _ := attr(first.Attributes, "reqlock.outcome"); v.AsString() != "obtained" {
			t.Errorf("first acquire outcome %q", v.AsString())
		}
		if v, ok := attr(first.Attributes, "reqlock.fence"); !ok || v.AsInt64() <= 0 {
			t.Errorf("first acquire fence %v (%v)", v.Emit(), ok)
		}
		if v, _ := attr(first.Attributes, "reqlock.store"); v.AsString() != store.Value.AsString() {
			t.Errorf("acquire store %q", v.AsString())
		}
		taken := acquires[1]
		if v, _ := attr(taken.Attributes, "reqlock.outcome"); v.AsString() != "taken" {
			t.Errorf("second acquire outcome %q", v.AsString())
		}
		if v, ok := attr(taken.Attributes, "reqlock.holder_ttl_ms"); !ok || v.AsInt64() <= 0 || v.AsInt64() > core.DefaultTTL.Milliseconds() {
			t.Errorf("taken acquire holder_ttl_ms %v (%v)", v.Emit(), ok)
		}
		if refused := acquires[len(acquires)-1]; refused.Status.Code != codes.Error {
			t.Errorf("refused acquire status %v", refused.Status)
		}
		releases := p.ended("reqlock.release")
		want := []string{"released", "not_held", "released"}
		if len(releases) != len(want) {
			t.Fatalf("%d release spans, want %d", len(releases), len(want))
		}
		for i, w := range want {
			if v, _ := attr(releases[i].Attributes, "reqlock.outcome"); v.AsString() != w {
				t.Errorf("release %d outcome %q, want %q", i, v.AsString(), w)
			}
			if _, ok := attr(releases[i].Attributes, "reqlock.fence"); !ok {
				t.Errorf("release %d has no fence", i)
			}
		}
	})
}

// storeAttr is the reqlock.store of the telemetry store a subtest of
// lockertest.Each runs on (with or without a holder label).
func storeAttr(t *testing.T) attribute.KeyValue {
	name := strings.TrimSuffix(path.Base(t.Name()), "+holder")
	kind := map[string]string{"memory": "memory", "redis": "redis", "cluster": "redis_cluster", "redlock": "redlock"}[name]
	if kind == "" {
		t.Fatalf("no reqlock.store for %s", t.Name())
	}
	return attribute.String("reqlock.store", kind)
}

func modeOf(m string) attribute.KeyValue {
	if m == "try" {
		return modeTry
	}
	return modeWait
}

// A stopped redis-server: the acquire is unavailable, its span an Error.
func TestTelemetryUnavailable(t *testing.T) {
	srv := redistest.Start(t)
	p := newProbe()
	l := newLocker(redisstore.New(srv.Client(t)), core.WithTelemetry(p.telemetry()),
		core.WithTTL(500*time.Millisecond), core.WithAttemptTimeout(100*time.Millisecond))
	ctx := ctxT(t, 10*time.Second)
	if lk, err := l.TryObtain(ctx, "warm"); err != nil { // connect before the pause
		t.Fatal(err)
	} else if err := lk.Release(ctx); err != nil {
		t.Fatal(err)
	}
	srv.Pause()
	_, err := l.TryObtain(ctx, "k")
	_, werr := l.Obtain(ctx, "k")
	srv.Resume()
	if !errors.Is(err, core.ErrUnavailable) || !errors.Is(werr, core.ErrUnavailable) {
		t.Fatalf("TryObtain on a paused server: %v; Obtain: %v", err, werr)
	}
	for _, m := range []attribute.KeyValue{modeTry, modeWait} {
		if got := p.sum(t, "reqlock.lock.acquisitions", storeRedis, m, outcome("unavailable")); got != 1 {
			t.Errorf("unavailable %v = %d, want 1", m, got)
		}
	}
	spans := p.ended("reqlock.acquire")
	for _, s := range spans[len(spans)-2:] {
		if s.Status.Code != codes.Error {
			t.Errorf("unavailable acquire status %v", s.Status)
		}
		if v, _ := attr(s.Attributes, "reqlock.outcome"); v.AsString() != "unavailable" {
			t.Errorf("unavailable acquire outcome %q", v.AsString())
		}
	}
	if got := p.sum(t, "reqlock.lock.held"); got != 0 {
		t.Errorf("held = %d, want 0", got)
	}
}

// The acquire span is a child of the span in the caller's context, and so
// is the release span; Do and Once make the same spans.
func TestTelemetrySpanParent(t *testing.T) {
	p := newProbe()
	l := newLocker(memorystore.New(), core.WithTelemetry(p.telemetry()))
	ctx, req := p.request(ctxT(t, 10*time.Second))
	if err := l.Do(ctx, "k", func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Once(ctx, "o", time.Minute, func(context.Context) ([]byte, error) { return []byte("x"), nil }); err != nil {
		t.Fatal(err)
	}
	if out, err := l.Once(ctx, "o", time.Minute, func(context.Context) ([]byte, error) { return nil, nil }); err != nil || !out.Replayed {
		t.Fatal(out, err)
	}
	req.End()
	want := req.SpanContext()
	acquires, releases := p.ended("reqlock.acquire"), p.ended("reqlock.release")
	if len(acquires) != 3 || len(releases) != 2 {
		t.Fatalf("%d acquire and %d release spans, want 3 and 2", len(acquires), len(releases))
	}
	for _, s := range append(acquires, releases...) {
		if s.Parent.SpanID() != want.SpanID() || s.SpanContext.TraceID() != want.TraceID() {
			t.Errorf("%s span's parent %v, want the request span %v", s.Name, s.Parent.SpanID(), want.SpanID())
		}
	}
	for i, w := range []string{"obtained", "obtained", "recorded"} {
		if v, _ := attr(acquires[i].Attributes, "reqlock.outcome"); v.AsString() != w {
			t.Errorf("acquire %d outcome %q, want %q", i, v.AsString(), w)
		}
		if v, _ := attr(acquires[i].Attributes, "reqlock.mode"); v.AsString() != "wait" {
			t.Errorf("acquire %d mode %q, want wait", i, v.AsString())
		}
	}
}

// However many keys go through a Locker, its metrics keep a small, fixed
// number of streams: no key, hash, token or fence is an attribute.
func TestTelemetryBoundedStreams(t *testing.T) {
	p := newProbe()
	l := newLocker(memorystore.New(), core.WithTelemetry(core.Telemetry{MeterProvider: p.telemetry().MeterProvider, TracerProvider: tracenoop.NewTracerProvider()}))
	ctx := ctxT(t, time.Minute)
	const keys = 100_000
	for i := range keys {
		key := fmt.Sprint("user-", i)
		lk, err := l.TryObtain(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.TryObtain(ctx, key); !errors.Is(err, core.ErrNotObtained) {
			t.Fatal(err)
		}
		if err := lk.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// acquisitions and wait.duration {try × obtained, taken}, held, and
	// hold.duration {released}.
	if n := p.streams(t); n != 6 {
		t.Errorf("%d keys made %d metric streams, want 6", keys, n)
	}
	if got := p.sum(t, "reqlock.lock.acquisitions"); got != 2*keys {
		t.Errorf("acquisitions = %d, want %d", got, 2*keys)
	}
}
