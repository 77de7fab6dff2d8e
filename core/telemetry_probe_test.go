package core_test

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/reqlock/reqlock/core"
)

// probe is an SDK pair that a test reads back: metrics through a manual
// reader, spans through an in-memory exporter.
type probe struct {
	reader *sdkmetric.ManualReader
	spans  *tracetest.InMemoryExporter
	tp     *sdktrace.TracerProvider
}

func newProbe() *probe {
	p := &probe{reader: sdkmetric.NewManualReader(), spans: tracetest.NewInMemoryExporter()}
	p.tp = sdktrace.NewTracerProvider(sdktrace.WithSyncer(p.spans))
	return p
}

func (p *probe) telemetry() core.Telemetry {
	return core.Telemetry{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(p.reader)), TracerProvider: p.tp}
}

// request starts the span a middleware would have put in the context.
func (p *probe) request(ctx context.Context) (context.Context, trace.Span) {
	return p.tp.Tracer("test").Start(ctx, "request")
}

func (p *probe) collect(t testing.TB) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := p.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

// has reports whether set holds every attribute of want.
func has(set attribute.Set, want []attribute.KeyValue) bool {
	for _, kv := range want {
		if v, ok := set.Value(kv.Key); !ok || v != kv.Value {
			return false
		}
	}
	return true
}

// sum adds up the data points of the counter or up-down counter name whose
// attributes hold want.
func (p *probe) sum(t testing.TB, name string, want ...attribute.KeyValue) int64 {
	t.Helper()
	var n int64
	for _, sm := range p.collect(t).ScopeMetrics {
		for _, m := range sm.Metrics {
			if s, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == name {
				for _, dp := range s.DataPoints {
					if has(dp.Attributes, want) {
						n += dp.Value
					}
				}
			}
		}
	}
	return n
}

// count adds up the counts of the histogram name's data points whose
// attributes hold want.
func (p *probe) count(t testing.TB, name string, want ...attribute.KeyValue) uint64 {
	t.Helper()
	var n uint64
	for _, sm := range p.collect(t).ScopeMetrics {
		for _, m := range sm.Metrics {
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok && m.Name == name {
				for _, dp := range h.DataPoints {
					if has(dp.Attributes, want) {
						n += dp.Count
					}
				}
			}
		}
	}
	return n
}

// streams is how many data points the reader holds, over every metric.
func (p *probe) streams(t testing.TB) (n int) {
	for _, sm := range p.collect(t).ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				n += len(d.DataPoints)
			case metricdata.Histogram[float64]:
				n += len(d.DataPoints)
			default:
				t.Fatalf("%s: unexpected data %T", m.Name, d)
			}
		}
	}
	return n
}

// ended returns the ended spans named name.
func (p *probe) ended(name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range p.spans.GetSpans() {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// attr returns the attribute key of a span's attributes.
func attr(kvs []attribute.KeyValue, key string) (attribute.Value, bool) {
	for _, kv := range kvs {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// logBuffer is an io.Writer safe to read while a logger writes to it.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var (
	storeMemory = attribute.String("reqlock.store", "memory")
	storeRedis  = attribute.String("reqlock.store", "redis")
	modeTry     = attribute.String("reqlock.mode", "try")
	modeWait    = attribute.String("reqlock.mode", "wait")
)

func outcome(o string) attribute.KeyValue { return attribute.String("reqlock.outcome", o) }
func reason(r string) attribute.KeyValue  { return attribute.String("reqlock.reason", r) }
