package httplock_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/benchratio"
	"github.com/reqlock/reqlock/internal/httpcases"
)

// BenchmarkMiddlewareTelemetry measures, in one run on each store, a locked
// request with Config.Telemetry off, on with noop providers, and on with
// the OpenTelemetry SDK (metrics into a ManualReader, the request span
// recording). Every router has the same server span around it, so the
// figures differ by reqlock's telemetry alone. "ratio" interleaves the three
// and reports noop/off and sdk/off.
func BenchmarkMiddlewareTelemetry(b *testing.B) {
	for _, st := range httpcases.Stores {
		if st.NoBench {
			continue
		}
		b.Run(st.Name, func(b *testing.B) {
			be := st.Open(b)
			l := core.NewLocker(be.Store, core.WithLogger(httpcases.Quiet))
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
			tp := sdktrace.NewTracerProvider() // spans record; nothing exports them
			b.Cleanup(func() {
				_ = mp.Shutdown(context.Background())
				_ = tp.Shutdown(context.Background())
			})
			tracer := tp.Tracer("bench")
			build := func(tel *core.Telemetry) http.Handler {
				lock := httplock.New(httplock.Config{Locker: l, Key: httplock.FromContext(httpcases.ValueKey(httpcases.UserKey)), Telemetry: tel})
				mux := http.NewServeMux()
				mux.Handle("POST "+httpcases.BenchPath, lock(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
				inner := httpcases.WithUser(mux)
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					ctx, span := tracer.Start(r.Context(), "server", trace.WithSpanKind(trace.SpanKindServer))
					defer span.End()
					inner.ServeHTTP(w, r.WithContext(ctx))
				})
			}
			off := build(nil)
			noop := build(&core.Telemetry{MeterProvider: metricnoop.NewMeterProvider(), TracerProvider: tracenoop.NewTracerProvider()})
			sdk := build(&core.Telemetry{MeterProvider: mp, TracerProvider: tp})
			serve := func(b *testing.B, h http.Handler) func() {
				return func() {
					r := httptest.NewRequest("POST", "/orders/42", nil)
					r.Header.Set(httpcases.UserHeader, "alice")
					w := httptest.NewRecorder()
					h.ServeHTTP(w, r)
					if w.Code != http.StatusOK {
						b.Fatalf("status %d: %s", w.Code, w.Body)
					}
				}
			}
			cycles := func(b *testing.B) []benchratio.Cycle {
				return []benchratio.Cycle{
					{Name: "off", Run: serve(b, off)},
					{Name: "noop", Run: serve(b, noop)},
					{Name: "sdk", Run: serve(b, sdk)},
				}
			}
			benchratio.Each(b, "", cycles)
			b.Run("ratio", func(b *testing.B) {
				c := cycles(b)
				ns := benchratio.Measure(b, c...)
				b.ReportMetric(ns[1]/ns[0], "noop/off")
				b.ReportMetric(ns[2]/ns[0], "sdk/off")
			})
		})
	}
}
