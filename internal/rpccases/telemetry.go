package rpccases

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
)

// telemetry checks that the engine's metrics name the RPC method as the
// scope, as they name a route for HTTP, and the outcome of each call.
func telemetry(t *testing.T, a Adapter, be Backend) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	cfg := config(be)
	cfg.Replay = true
	cfg.Telemetry = &core.Telemetry{MeterProvider: mp, TracerProvider: tracenoop.NewTracerProvider()}
	c := a.Serve(t, cfg, Handlers{})
	want(t, "a call", c.Unary(t.Context(), key("k", "a")), OK)
	wantText(t, "its retry", c.Unary(t.Context(), key("k", "a")), "ok", true)
	want(t, "another request with the key", c.Unary(t.Context(), key("k", "b")), FailedPrecondition)

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != httplock.MetricRequests {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				scope, _ := dp.Attributes.Value(attribute.Key("reqlock.scope"))
				outcome, _ := dp.Attributes.Value(attribute.Key("reqlock.outcome"))
				got[scope.AsString()+" "+outcome.AsString()] += dp.Value
			}
		}
	}
	for _, k := range []string{
		UnaryMethod + " " + httplock.OutcomeLocked,
		UnaryMethod + " " + httplock.OutcomeReplayed,
		UnaryMethod + " " + httplock.OutcomeFingerprint,
	} {
		if got[k] != 1 {
			t.Errorf("%s counted %d times, want once; all: %v", httplock.MetricRequests, got[k], got)
		}
	}
}

// spans checks the engine's annotations on the server span of the
// framework's own instrumentation (otelgrpc, otelconnect): the call that
// ran says locked, with no reqlock.rejected event; its duplicate says
// rejected, with one such event and its reason. (The instrumentation adds
// events of its own, for the messages.)
func spans(t *testing.T, a Adapter, be Backend) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	cfg := config(be)
	cfg.Telemetry = &core.Telemetry{TracerProvider: tp, MeterProvider: metricnoop.NewMeterProvider()}
	cfg.Traced = tp
	g := NewGate()
	c := a.Serve(t, cfg, Handlers{Unary: func(ctx context.Context, _ string) (string, error) { return "ok", g.Pass(ctx) }})
	first := held(t, c, g, key("k", "a"))
	wantRetry(t, "a duplicate", c.Unary(t.Context(), key("k", "a")), Aborted)
	g.Release()
	want(t, "the first call", <-first, OK)

	var server []sdktrace.ReadOnlySpan
	deadline := time.Now().Add(10 * time.Second)
	for len(server) < 2 && time.Now().Before(deadline) { // a server span ends after its answer goes out
		time.Sleep(10 * time.Millisecond)
		server = server[:0]
		for _, s := range rec.Ended() {
			if s.SpanKind() == trace.SpanKindServer {
				server = append(server, s)
			}
		}
	}
	var locked, rejected bool
	for _, s := range server {
		switch outcome := attr(s.Attributes(), "reqlock.outcome"); outcome {
		case httplock.OutcomeLocked:
			locked = len(rejections(s)) == 0
		case httplock.OutcomeRejected:
			ev := rejections(s)
			rejected = len(ev) == 1 && attr(ev[0].Attributes, "reason") == httplock.OutcomeRejected
		default:
			t.Errorf("server span %q has reqlock.outcome %q", s.Name(), outcome)
		}
	}
	if !locked || !rejected {
		t.Fatalf("%d server spans: one locked without a rejection %v, one rejected with its event %v", len(server), locked, rejected)
	}
}

// rejections are s's reqlock.rejected events.
func rejections(s sdktrace.ReadOnlySpan) []sdktrace.Event {
	var ev []sdktrace.Event
	for _, e := range s.Events() {
		if e.Name == httplock.EventRejected {
			ev = append(ev, e)
		}
	}
	return ev
}

// attr is the value of attribute k among kvs, "" without it.
func attr(kvs []attribute.KeyValue, k string) string {
	for _, kv := range kvs {
		if string(kv.Key) == k {
			return kv.Value.Emit()
		}
	}
	return ""
}
