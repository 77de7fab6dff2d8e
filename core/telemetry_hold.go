package core

import (
	"context"
	"errors"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// heldTelemetry is what a lock of a Locker with telemetry keeps for it.
type heldTelemetry struct {
	since time.Time
	// request is the span that was current and recording in the acquire's
	// context (the request's, under an HTTP middleware), or nil: renewal
	// failures and the loss of the lock are events on it while it records.
	request trace.Span
}

// obtained starts counting lk as held; ctx is the acquire's, and since is
// when the attempt that got the lock started, from which its lease runs.
func (t *telemetry) obtained(ctx context.Context, lk *Lock, since time.Time) {
	request, _ := ctx.Value(requestSpanKey{}).(trace.Span)
	lk.tel = &heldTelemetry{since: since, request: request}
	t.held.Add(ctx, 1, t.byStore.add...)
}

// holdEnded records the end of lk's hold; it runs once per lock, by
// whichever of release and loss came first.
func (t *telemetry) holdEnded(lk *Lock, outcome holdOutcome) {
	ctx := context.Background()
	t.held.Add(ctx, -1, t.byStore.add...)
	t.holdDuration.Record(ctx, time.Since(lk.tel.since).Seconds(), t.byHold[outcome].record...)
}

// lockLost records that the watchdog or Refresh lost lk for reason.
func (t *telemetry) lockLost(lk *Lock, reason lossReason) {
	t.holdEnded(lk, holdLost)
	t.lost.Add(context.Background(), 1, t.byLoss[reason].add...)
	if s := lk.tel.request; s != nil && s.IsRecording() {
		s.AddEvent(eventLockLost, trace.WithAttributes(fenceAttr(lk.fence), attribute.String(attrReason, reason.String())))
	}
}

// renewal counts one extend of a lock that ended with err.
func (t *telemetry) renewal(err error) {
	outcome := renewalRenewed
	switch {
	case err == nil:
	case errors.Is(err, ErrNotHeld):
		outcome = renewalNotHeld
	default:
		outcome = renewalFailed
	}
	t.renewals.Add(context.Background(), 1, t.byRenewal[outcome].add...)
}

// renewalFailed puts a transient renewal failure of lk on its request span.
func (t *telemetry) renewalFailed(lk *Lock, err error) {
	if s := lk.tel.request; s != nil && s.IsRecording() {
		s.AddEvent(eventRenewalFailed, trace.WithAttributes(fenceAttr(lk.fence), attribute.String(attrError, err.Error())))
	}
}

// renewBatch records one batched extend: how late each of its locks was
// (lags), and how long the round trip took.
func (t *telemetry) renewBatch(lags []time.Duration, took time.Duration, results []store.Renewal) {
	ctx := context.Background()
	for _, lag := range lags {
		t.watchdogLag.Record(ctx, max(lag, 0).Seconds(), t.byStore.record...)
	}
	outcome := batchOK
	for _, r := range results {
		if r.Err != nil && !errors.Is(r.Err, ErrNotHeld) {
			outcome = batchFailed
			break
		}
	}
	t.batch.Record(ctx, took.Seconds(), t.byBatch[outcome].record...)
}

// startRelease starts the span of a release.
func (t *telemetry) startRelease(ctx context.Context) (context.Context, trace.Span) {
	if t.tracer == nil {
		return ctx, nil
	}
	return t.tracer.Start(ctx, spanRelease, t.releaseSpan...)
}

// endRelease ends the span of lk's release with how it ended.
func endRelease(span trace.Span, lk *Lock, err error) {
	if span == nil {
		return
	}
	if !span.IsRecording() {
		span.End()
		return
	}
	switch {
	case err == nil:
		span.SetAttributes(fenceAttr(lk.fence), releaseReleased)
	case errors.Is(err, ErrNotHeld):
		span.SetAttributes(fenceAttr(lk.fence), releaseNotHeld)
	default:
		span.SetAttributes(fenceAttr(lk.fence), releaseUnavailable)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
