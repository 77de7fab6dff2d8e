package core

import (
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Telemetry turns on OpenTelemetry metrics and spans, for a Locker
// (WithTelemetry) or a middleware (httplock.Config.Telemetry). reqlock uses
// the OpenTelemetry API only: the application picks the SDK and exporter.
//
// A nil provider means the global one (otel.GetMeterProvider,
// otel.GetTracerProvider), read when the Locker or middleware is built. To
// have metrics without spans, or the other way round, pass the API's noop
// provider for the part you do not want.
type Telemetry struct {
	MeterProvider  metric.MeterProvider
	TracerProvider trace.TracerProvider
}

// WithTelemetry records the Locker's metrics and spans through t. Without it
// the Locker records nothing and its hot path does no telemetry work.
func WithTelemetry(t Telemetry) Option {
	return func(l *Locker) { l.telemetry = &t }
}
