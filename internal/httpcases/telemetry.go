package httpcases

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
)

// Telemetry is an OpenTelemetry SDK that keeps what it is given, for tests:
// metrics read on demand, spans kept in memory as they end.
type Telemetry struct {
	Reader *sdkmetric.ManualReader
	Spans  *tracetest.InMemoryExporter
	MP     *sdkmetric.MeterProvider
	TP     *sdktrace.TracerProvider
}

// NewTelemetry returns a Telemetry that shuts down at cleanup.
func NewTelemetry(tb testing.TB) *Telemetry {
	t := &Telemetry{Reader: sdkmetric.NewManualReader(), Spans: tracetest.NewInMemoryExporter()}
	t.MP = sdkmetric.NewMeterProvider(sdkmetric.WithReader(t.Reader))
	t.TP = sdktrace.NewTracerProvider(sdktrace.WithSyncer(t.Spans))
	tb.Cleanup(func() {
		_ = t.MP.Shutdown(context.Background())
		_ = t.TP.Shutdown(context.Background())
	})
	return t
}

// Config is the middleware's Telemetry over this SDK.
func (t *Telemetry) Config() *core.Telemetry {
	return &core.Telemetry{MeterProvider: t.MP, TracerProvider: t.TP}
}

// Stream is one metric stream's attributes and value: a count for
// reqlock.http.requests, the number of recorded waits for
// reqlock.http.wait.duration.
type Stream struct {
	Scope, Outcome string
	Status         int64 // 0: no status attribute
	Value          int64
}

// Streams returns the streams of metric name.
func (t *Telemetry) Streams(tb testing.TB, name string) []Stream {
	tb.Helper()
	var rm metricdata.ResourceMetrics
	if err := t.Reader.Collect(context.Background(), &rm); err != nil {
		tb.Fatal(err)
	}
	var out []Stream
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out = append(out, stream(p.Attributes, p.Value))
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					out = append(out, stream(p.Attributes, int64(p.Count)))
				}
			}
		}
	}
	return out
}

func stream(set attribute.Set, v int64) Stream {
	s := Stream{Value: v}
	if a, ok := set.Value("reqlock.scope"); ok {
		s.Scope = a.AsString()
	}
	if a, ok := set.Value("reqlock.outcome"); ok {
		s.Outcome = a.AsString()
	}
	if a, ok := set.Value("http.response.status_code"); ok {
		s.Status = a.AsInt64()
	}
	return s
}

// Count sums reqlock.http.requests over the streams with outcome and status
// (any status when status is -1).
func (t *Telemetry) Count(tb testing.TB, outcome string, status int64) int64 {
	tb.Helper()
	var n int64
	for _, s := range t.Streams(tb, httplock.MetricRequests) {
		if s.Outcome == outcome && (status == -1 || s.Status == status) {
			n += s.Value
		}
	}
	return n
}

// Waits sums the recorded waits of outcome.
func (t *Telemetry) Waits(tb testing.TB, outcome string) int64 {
	tb.Helper()
	var n int64
	for _, s := range t.Streams(tb, httplock.MetricWaitDuration) {
		if s.Outcome == outcome {
			n += s.Value
		}
	}
	return n
}

// ServerSpans returns the ended spans of kind server (the ones the
// framework's instrumentation, or the test's stand-in for it, started).
func (t *Telemetry) ServerSpans() tracetest.SpanStubs {
	var out tracetest.SpanStubs
	for _, s := range t.Spans.GetSpans() {
		if s.SpanKind == trace.SpanKindServer {
			out = append(out, s)
		}
	}
	return out
}

// SpanAttr returns a span's attribute value as a string, or "".
func SpanAttr(attrs []attribute.KeyValue, key string) string {
	for _, a := range attrs {
		if string(a.Key) == key {
			return a.Value.Emit()
		}
	}
	return ""
}
