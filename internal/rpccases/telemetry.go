package rpccases

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
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
