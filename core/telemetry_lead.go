package core

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/metric"
)

// The metrics of leadership (Lead, Elector): terms begun, and terms lost
// while the leader still meant to lead. A term that ends because its leader
// resigned is not lost.
const (
	metricLeaderTerms = "reqlock.leader.terms"
	metricLeaderLost  = "reqlock.leader.lost"
)

// leadTelemetry is the part of a Locker's telemetry for Lead.
type leadTelemetry struct {
	terms metric.Int64Counter
	lost  metric.Int64Counter
}

// newLeadTelemetry builds the instruments of leadership on m.
func newLeadTelemetry(m metric.Meter) (leadTelemetry, error) {
	var t leadTelemetry
	var err1, err2 error
	t.terms, err1 = m.Int64Counter(metricLeaderTerms, metric.WithUnit("{term}"),
		metric.WithDescription("Terms this process began as leader."))
	t.lost, err2 = m.Int64Counter(metricLeaderLost, metric.WithUnit("{term}"),
		metric.WithDescription("Terms that ended because the leader's lock was lost."))
	return t, errors.Join(err1, err2)
}

// termStarted counts a term this process began.
func (t *telemetry) termStarted() {
	t.lead.terms.Add(context.Background(), 1, t.byStore.add...)
}

// termLost counts a term this process lost.
func (t *telemetry) termLost() {
	t.lead.lost.Add(context.Background(), 1, t.byStore.add...)
}
