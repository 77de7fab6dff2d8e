package core_test

import (
	"context"
	"strings"
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/benchratio"
	"github.com/reqlock/reqlock/internal/cyclebench"
	"github.com/reqlock/reqlock/internal/redisfloor"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore"
)

// sdkTelemetry is the SDK with every span's cost paid on the caller's
// goroutine: metrics through a manual reader, spans chosen by sampler and
// handed as they end (WithSyncer) to an in-memory exporter, which copies
// each one. reset empties the exporter now and then, so that a long run
// does not measure a growing heap.
func sdkTelemetry(b *testing.B, sampler sdktrace.Sampler) (t core.Telemetry, reset func()) {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans), sdktrace.WithSampler(sampler))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	t = core.Telemetry{
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())),
		TracerProvider: tp,
	}
	n := 0
	return t, func() {
		if n++; n%256 == 0 {
			spans.Reset()
		}
	}
}

var noopTelemetry = core.Telemetry{MeterProvider: metricnoop.NewMeterProvider(), TracerProvider: tracenoop.NewTracerProvider()}

// telemetryCycles are one uncontended TryObtain + Release on Lockers over
// s: without telemetry (off); with the API's noop providers (noop); with
// the SDK's metrics and no spans (sdk-metrics); with the SDK's metrics and
// a span for every acquire and release (sdk: AlwaysSample); and with the
// SDK's metrics and one trace in a hundred sampled (sdk-sampled:
// TraceIDRatioBased(0.01), as a busy service would run it). Each has a
// key of its own.
func telemetryCycles(ctx context.Context, b *testing.B, s core.Store) []benchratio.Cycle {
	all, resetAll := sdkTelemetry(b, sdktrace.AlwaysSample())
	some, resetSome := sdkTelemetry(b, sdktrace.TraceIDRatioBased(0.01))
	metricsOnly := core.Telemetry{MeterProvider: all.MeterProvider, TracerProvider: tracenoop.NewTracerProvider()}
	off := newLocker(s)
	noop := newLocker(s, core.WithTelemetry(noopTelemetry))
	metrics := newLocker(s, core.WithTelemetry(metricsOnly))
	traced := newLocker(s, core.WithTelemetry(all))
	sampled := newLocker(s, core.WithTelemetry(some))
	return []benchratio.Cycle{
		{Name: "off", Run: func() { cyclebench.Lock(ctx, b, off, "off") }},
		{Name: "noop", Run: func() { cyclebench.Lock(ctx, b, noop, "noop") }},
		{Name: "sdk-metrics", Run: func() { cyclebench.Lock(ctx, b, metrics, "metrics") }},
		{Name: "sdk", Run: func() { cyclebench.Lock(ctx, b, traced, "sdk"); resetAll() }},
		{Name: "sdk-sampled", Run: func() { cyclebench.Lock(ctx, b, sampled, "sampled"); resetSome() }},
	}
}

// BenchmarkTelemetry: what telemetry adds to a lock cycle, read against
// the cycle without it and against the floor (bare SET NX PX + scripted
// release on the same redis-server), all in the same run. The ratio
// sub-benchmarks interleave the cycles and report noop/off, sdk/off and so
// on directly.
func BenchmarkTelemetry(b *testing.B) {
	ctx := context.Background()
	c := redistest.Start(b).Client(b)
	c.Ping(ctx)
	rs := redisstore.New(c)
	redisCycles := func(b *testing.B) []benchratio.Cycle {
		skey, err := newLocker(rs).StoreKey("floor")
		if err != nil {
			b.Fatal(err)
		}
		floorKey := "floor:" + skey[strings.IndexByte(skey, '{'):]
		floor := benchratio.Cycle{Name: "floor", Run: func() { cyclebench.Floor(ctx, b, c, redisfloor.SetNX, floorKey) }}
		return append([]benchratio.Cycle{floor}, telemetryCycles(ctx, b, rs)...)
	}
	benchratio.Each(b, "redis/", redisCycles)
	b.Run("redis/ratio", func(b *testing.B) { benchratio.Ratios(b, redisCycles(b)...) })

	ms := memorystore.New()
	memoryCycles := func(b *testing.B) []benchratio.Cycle { return telemetryCycles(ctx, b, ms) }
	benchratio.Each(b, "memory/", memoryCycles)
	b.Run("memory/ratio", func(b *testing.B) { benchratio.Ratios(b, memoryCycles(b)...) })
}
