package core

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// requestSpanKey carries, below the acquire span, the span that was current
// in the caller's context: the lock's later span events go there.
type requestSpanKey struct{}

// lockCall runs one acquire call of mode that returns a lock, observed.
func (t *telemetry) lockCall(ctx context.Context, mode acquireMode, call func(context.Context) (*Lock, error)) (*Lock, error) {
	actx, op := t.startAcquire(ctx, mode)
	ended := false
	defer func() { op.endPanicking(ended) }()
	lk, err := call(actx)
	ended = true
	op.end(ctx, lk, nil, err)
	return lk, err
}

// recordCall runs one acquire call of mode that may return a record, observed.
func (t *telemetry) recordCall(ctx context.Context, mode acquireMode, call func(context.Context) (*Lock, []byte, error)) (*Lock, []byte, error) {
	actx, op := t.startAcquire(ctx, mode)
	ended := false
	defer func() { op.endPanicking(ended) }()
	lk, rec, err := call(actx)
	ended = true
	op.end(ctx, lk, rec, err)
	return lk, rec, err
}

// acquireOp is one acquire call under way.
type acquireOp struct {
	t     *telemetry
	mode  acquireMode
	start time.Time
	span  trace.Span // nil when spans are off
}

func (t *telemetry) startAcquire(ctx context.Context, mode acquireMode) (context.Context, acquireOp) {
	op := acquireOp{t: t, mode: mode, start: time.Now()}
	if t.tracer == nil {
		return ctx, op
	}
	parent := trace.SpanFromContext(ctx)
	ctx, op.span = t.tracer.Start(ctx, spanAcquire, t.acquireSpan[mode]...)
	if parent.IsRecording() {
		// Only a span recording now can take the lock's events later.
		ctx = context.WithValue(ctx, requestSpanKey{}, parent)
	}
	return ctx, op
}

// endPanicking ends the span of a call that did not return (a Store of
// someone else's panicked), unless end did; the panic goes on up, and is
// no outcome to count.
func (op acquireOp) endPanicking(ended bool) {
	if ended || op.span == nil {
		return
	}
	op.span.SetStatus(codes.Error, "reqlock: the acquire panicked")
	op.span.End()
}

// end records how the call on the caller's ctx ended.
func (op acquireOp) end(ctx context.Context, lk *Lock, rec []byte, err error) {
	t := op.t
	outcome := classifyAcquire(ctx, lk, rec, err)
	if outcome < numAcquireOutcomes {
		m := &t.byAcquire[op.mode][outcome]
		t.acquisitions.Add(ctx, 1, m.add...)
		t.waitDuration.Record(ctx, time.Since(op.start).Seconds(), m.record...)
	}
	if op.span == nil {
		return
	}
	if !op.span.IsRecording() { // not sampled: no attributes to build
		op.span.End()
		return
	}
	switch outcome {
	case acquireObtained:
		op.span.SetAttributes(attribute.String(attrOutcome, acquireOutcomeNames[outcome]), fenceAttr(lk.fence))
	case acquireTaken:
		if left, ok := HolderTTL(err); ok {
			op.span.SetAttributes(attribute.String(attrOutcome, acquireOutcomeNames[outcome]), attribute.Int64(attrHolderTTLMS, left.Milliseconds()))
		} else {
			op.span.SetAttributes(attribute.String(attrOutcome, acquireOutcomeNames[outcome]))
		}
	case acquireUnavailable:
		op.span.SetAttributes(attribute.String(attrOutcome, acquireOutcomeNames[outcome]))
		op.span.SetStatus(codes.Error, err.Error())
	case acquireRefused:
		op.span.SetStatus(codes.Error, err.Error())
	default:
		op.span.SetAttributes(attribute.String(attrOutcome, acquireOutcomeNames[outcome]))
	}
	op.span.End()
}

// classifyAcquire names how an acquire call on the caller's ctx ended. A
// context that was cancelled (the caller went away) makes it cancelled
// whatever the error; a deadline that ran out is the caller's budget for
// the wait, so the error says what happened within it: taken when the
// store said someone held the key, unavailable when it had not answered.
func classifyAcquire(ctx context.Context, lk *Lock, rec []byte, err error) acquireOutcome {
	switch {
	case err == nil && lk != nil:
		return acquireObtained
	case err == nil && rec != nil:
		return acquireRecorded
	case err == nil:
		return acquireRefused // no lock and no record: not a call a store answered
	case !errors.Is(err, ErrNotObtained) && !errors.Is(err, ErrUnavailable):
		return acquireRefused // ErrEmptyKey, ErrNoRecords: whatever ctx says
	case errors.Is(ctx.Err(), context.Canceled):
		return acquireCancelled
	case errors.Is(err, ErrNotObtained):
		return acquireTaken
	}
	return acquireUnavailable
}
