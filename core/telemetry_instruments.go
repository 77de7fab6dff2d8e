package core

import (
	"errors"

	"github.com/reqlock/reqlock/core/store"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// telemetry is all a Locker needs to record its metrics and spans, built
// once by WithTelemetry; a Locker without it holds nil and does no
// telemetry work. Every attribute set is built here, once per (store kind,
// outcome), so that recording a measurement allocates nothing.
type telemetry struct {
	tracer trace.Tracer // nil: spans off (the API's noop provider)

	acquisitions metric.Int64Counter
	waitDuration metric.Float64Histogram
	holdDuration metric.Float64Histogram
	renewals     metric.Int64Counter
	lost         metric.Int64Counter
	held         metric.Int64UpDownCounter
	watchdogLag  metric.Float64Histogram
	batch        metric.Float64Histogram
	lead         leadTelemetry

	byStore     measured // reqlock.store alone
	byAcquire   [numModes][numAcquireOutcomes]measured
	byHold      [numHoldOutcomes]measured
	byRenewal   [numRenewalOutcomes]measured
	byLoss      [numLossReasons]measured
	byBatch     [numBatchOutcomes]measured
	acquireSpan [numModes][]trace.SpanStartOption
	releaseSpan []trace.SpanStartOption
}

// measured is one attribute set as the options every instrument kind takes.
type measured struct {
	add    []metric.AddOption
	record []metric.RecordOption
}

func measuredWith(kvs ...attribute.KeyValue) measured {
	o := metric.WithAttributeSet(attribute.NewSet(kvs...))
	return measured{add: []metric.AddOption{o}, record: []metric.RecordOption{o}}
}

// Bucket boundaries, in seconds: a lock is taken in well under a
// millisecond on a near store, and waited for or held up to minutes.
var (
	waitBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
	holdBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600}
	lagBuckets  = []float64{0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5}
)

// newTelemetry builds the instruments of a Locker over s from cfg; nil
// providers are the global ones, read now.
func newTelemetry(cfg Telemetry, s Store) *telemetry {
	mp, tp := cfg.MeterProvider, cfg.TracerProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	t := &telemetry{}
	if _, off := tp.(tracenoop.TracerProvider); !off {
		t.tracer = tp.Tracer(tracerName)
	}
	m := mp.Meter(tracerName)
	var errs [8]error
	t.acquisitions, errs[0] = m.Int64Counter(metricAcquisitions, metric.WithUnit("{acquisition}"),
		metric.WithDescription("Calls that tried to take a lock, by how they ended."))
	t.waitDuration, errs[1] = m.Float64Histogram(metricWaitDuration, metric.WithUnit("s"),
		metric.WithDescription("Time from the call of an acquire to its return, waiting included."),
		metric.WithExplicitBucketBoundaries(waitBuckets...))
	t.holdDuration, errs[2] = m.Float64Histogram(metricHoldDuration, metric.WithUnit("s"),
		metric.WithDescription("Time a lock was held, from obtained to released or lost."),
		metric.WithExplicitBucketBoundaries(holdBuckets...))
	t.renewals, errs[3] = m.Int64Counter(metricRenewals, metric.WithUnit("{renewal}"),
		metric.WithDescription("Lease extensions by the watchdog or Refresh, by how they ended."))
	t.lost, errs[4] = m.Int64Counter(metricLost, metric.WithUnit("{lock}"),
		metric.WithDescription("Locks lost while still meant to be held."))
	t.held, errs[5] = m.Int64UpDownCounter(metricHeld, metric.WithUnit("{lock}"),
		metric.WithDescription("Locks held now."))
	t.watchdogLag, errs[6] = m.Float64Histogram(metricWatchdogLag, metric.WithUnit("s"),
		metric.WithDescription("How late a due renewal started after it was due."),
		metric.WithExplicitBucketBoundaries(lagBuckets...))
	t.batch, errs[7] = m.Float64Histogram(metricBatchDuration, metric.WithUnit("s"),
		metric.WithDescription("One batched extend round trip of the watchdog."),
		metric.WithExplicitBucketBoundaries(waitBuckets...))
	var leadErr error
	t.lead, leadErr = newLeadTelemetry(m)
	if err := errors.Join(append(errs[:], leadErr)...); err != nil {
		// The API hands back working no-op instruments with the error: the
		// Locker runs on, the SDK's error handler hears of it.
		otel.Handle(err)
	}

	store := attribute.String(attrStore, storeKind(s))
	t.byStore = measuredWith(store)
	for mode := range numModes {
		m := attribute.String(attrMode, modeNames[mode])
		for o := range numAcquireOutcomes {
			t.byAcquire[mode][o] = measuredWith(store, m, attribute.String(attrOutcome, acquireOutcomeNames[o]))
		}
		t.acquireSpan[mode] = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(store, m)}
	}
	for o := range numHoldOutcomes {
		t.byHold[o] = measuredWith(store, attribute.String(attrOutcome, holdOutcomeNames[o]))
	}
	for o := range numRenewalOutcomes {
		t.byRenewal[o] = measuredWith(store, attribute.String(attrOutcome, renewalOutcomeNames[o]))
	}
	for r := range numLossReasons {
		t.byLoss[r] = measuredWith(store, attribute.String(attrReason, lossReasonNames[r]))
	}
	for o := range numBatchOutcomes {
		t.byBatch[o] = measuredWith(store, attribute.String(attrOutcome, batchOutcomeNames[o]))
	}
	t.releaseSpan = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(store)}
	return t
}

// storeKind is the reqlock.store of s: its Kind, or "other".
func storeKind(s Store) string {
	if k, ok := s.(store.Kinder); ok {
		return k.Kind()
	}
	return "other"
}
