package core

import (
	"context"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// heldGate is a reqlock.lock.held counter that runs onAdd in the caller's
// goroutine, as a slow metrics pipeline would: a test can hold a Locker up
// at the points where it records a lock taken (+1) or ended (-1).
type heldGate struct {
	noop.Int64UpDownCounter
	onAdd func(v int64)
}

func (c heldGate) Add(_ context.Context, v int64, _ ...metric.AddOption) { c.onAdd(v) }

type heldGateMeter struct {
	noop.Meter
	held heldGate
}

func (m heldGateMeter) Int64UpDownCounter(name string, _ ...metric.Int64UpDownCounterOption) (metric.Int64UpDownCounter, error) {
	if name == metricHeld {
		return m.held, nil
	}
	return noop.Int64UpDownCounter{}, nil
}

type heldGateProvider struct {
	noop.MeterProvider
	meter heldGateMeter
}

func (p heldGateProvider) Meter(string, ...metric.MeterOption) metric.Meter { return p.meter }
