package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// counterTotal is the sum of the counter name's data points in r.
func counterTotal(t *testing.T, r *sdkmetric.ManualReader, name string) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if s, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == name {
				for _, dp := range s.DataPoints {
					n += dp.Value
				}
			}
		}
	}
	return n
}

// Two terms: the first lost (its lock deleted from the store), the second
// given up when ctx ends. reqlock.leader.terms counts both,
// reqlock.leader.lost the first only.
func TestTelemetryCountsTermsBegunAndLost(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	s := memorystore.New()
	l := leadLocker(s, core.WithTTL(150*time.Millisecond), core.WithTelemetry(core.Telemetry{
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
		TracerProvider: tracenoop.NewTracerProvider(),
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	began := make(chan struct{}, 2)
	done := make(chan error, 1)
	go func() {
		done <- l.Lead(ctx, "job", func(fctx context.Context) error {
			began <- struct{}{}
			<-fctx.Done()
			return nil
		})
	}()
	<-began
	skey, _ := l.StoreKey("job")
	s.Delete(skey)
	<-began // the second term
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Lead = %v", err)
	}
	if n := counterTotal(t, reader, "reqlock.leader.terms"); n != 2 {
		t.Errorf("reqlock.leader.terms = %d, want 2", n)
	}
	if n := counterTotal(t, reader, "reqlock.leader.lost"); n != 1 {
		t.Errorf("reqlock.leader.lost = %d, want 1", n)
	}
}
