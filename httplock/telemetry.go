package httplock

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/reqlock/reqlock/core"
)

// The middleware's metric names (see Config.Telemetry).
const (
	// MetricRequests counts requests by scope, outcome and status.
	MetricRequests = "reqlock.http.requests"
	// MetricWaitDuration is how long a request spent getting its key, in
	// seconds: the one attempt in Reject mode, the whole wait in Wait mode.
	MetricWaitDuration = "reqlock.http.wait.duration"
	// EventRejected is the span event of a request that did not reach its
	// handler.
	EventRejected = "reqlock.rejected"
)

// The attributes the middleware puts on metrics, spans and log lines.
const (
	attrScope      = attribute.Key("reqlock.scope")
	attrOutcome    = attribute.Key("reqlock.outcome")
	attrReason     = attribute.Key("reason")
	attrStatus     = attribute.Key("http.response.status_code")
	attrRetryAfter = attribute.Key("retry_after_s")
)

const instrumentationName = "github.com/reqlock/reqlock/httplock"

// telemetry holds the instruments of one Engine; nil when Config.Telemetry
// is.
type telemetry struct {
	requests metric.Int64Counter
	wait     metric.Float64Histogram
	metrics  bool // not the noop MeterProvider
	spans    bool // not the noop TracerProvider: annotate the request's span
	mode     Mode
	custom   bool // Config.Scope is set: the scope is the application's

	mu    sync.RWMutex
	attrs map[attrKey]attrOpts // bounded by maxAttrSets
}

// attrKey is one combination of metric attributes.
type attrKey struct {
	scope, outcome string
	status         int
}

// attrOpts are the measurement options of one attrKey, made once: building
// an attribute set per request would cost allocations on every one.
// Held as slices so that passing them on makes none.
type attrOpts struct {
	requests []metric.AddOption
	wait     []metric.RecordOption
}

// maxAttrSets bounds the cache of attribute sets. The scope attribute is
// bounded (see scopeAttr) and so is the rest; past the bound, sets are made
// per request rather than kept.
const maxAttrSets = 4096

func newTelemetry(t *core.Telemetry, cfg Config) (*telemetry, error) {
	mp, tp := t.MeterProvider, t.TracerProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	_, noSpans := tp.(tracenoop.TracerProvider)
	_, noMetrics := mp.(metricnoop.MeterProvider)
	meter := mp.Meter(instrumentationName)
	requests, err := meter.Int64Counter(MetricRequests, metric.WithUnit("{request}"),
		metric.WithDescription("Requests through the reqlock middleware, by what it did with them."))
	if err != nil {
		return nil, badField("Telemetry", "cannot make its instruments", err)
	}
	wait, err := meter.Float64Histogram(MetricWaitDuration, metric.WithUnit("s"),
		metric.WithDescription("Time a request spent getting its lock key."),
		metric.WithExplicitBucketBoundaries(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30))
	if err != nil {
		return nil, badField("Telemetry", "cannot make its instruments", err)
	}
	return &telemetry{
		requests: requests, wait: wait, metrics: !noMetrics, spans: !noSpans,
		mode: cfg.Mode, custom: cfg.Scope != "", attrs: make(map[attrKey]attrOpts),
	}, nil
}

// observation is what the engine noted about one request while telemetry is
// on.
type observation struct {
	outcome string              // what happened, unless a Rejection says
	w       http.ResponseWriter // the writer the answer went through, for its status
	waited  time.Duration       // getting the key took this long
	tried   bool                // the engine tried to get the key: waited counts
}

// record counts the request, times its wait and annotates its span.
// panicked: the handler panicked, so its status is not known here.
func (t *telemetry) record(ctx context.Context, scope string, o *observation, rej *Rejection, panicked bool) {
	outcome, status := o.outcome, 0
	switch {
	case rej != nil:
		outcome, status = rejectionOutcome(rej, t.mode), rej.Status
	case !panicked:
		status = statusOf(o.w)
	}
	if t.metrics {
		opts := t.options(attrKey{t.scopeAttr(scope), outcome, status})
		t.requests.Add(ctx, 1, opts.requests...)
		if o.tried {
			t.wait.Record(ctx, o.waited.Seconds(), opts.wait...)
		}
	}
	if !t.spans {
		return
	}
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attrOutcome.String(outcome))
	if rej != nil {
		ev := []attribute.KeyValue{attrReason.String(outcome), attrStatus.Int(rej.Status)}
		if rej.RetryAfter > 0 {
			ev = append(ev, attrRetryAfter.Int64(int64(ceilSeconds(rej.RetryAfter)/time.Second)))
		}
		span.AddEvent(EventRejected, trace.WithAttributes(ev...))
	}
}

// options returns the measurement options of k, made once.
func (t *telemetry) options(k attrKey) attrOpts {
	t.mu.RLock()
	opts, ok := t.attrs[k]
	t.mu.RUnlock()
	if ok {
		return opts
	}
	scoped := []attribute.KeyValue{attrScope.String(k.scope), attrOutcome.String(k.outcome)}
	all := scoped
	if k.status != 0 { // 0: not known, as the handler's writer does not tell
		all = append(all[:2:2], attrStatus.Int(k.status))
	}
	opts = attrOpts{
		requests: []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(all...))},
		wait:     []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(scoped...))},
	}
	t.mu.Lock()
	if len(t.attrs) < maxAttrSets {
		t.attrs[k] = opts
	}
	t.mu.Unlock()
	return opts
}

// statusOf is the status a writer reports, or 0: the replay capture, Gin's
// writer, the net/http middleware's own and the Echo adapters' do.
func statusOf(w http.ResponseWriter) int {
	switch w := w.(type) {
	case *capture:
		return w.status
	case interface{ Status() int }:
		return w.Status()
	}
	return 0
}

// scopeAttr is the scope as a metric attribute: boundedScope.
func (t *telemetry) scopeAttr(scope string) string { return boundedScope(scope, t.custom) }

// boundedScope is the scope as metrics and logs name it. A scope the
// application set (custom) is used as it is. A default scope starts with
// the request's method, which the client chooses: one outside the standard
// ones becomes "_OTHER", so that invented methods can make neither new
// metric streams nor new burst-log entries. The route template after it is
// the router's, one per route.
func boundedScope(scope string, custom bool) string {
	if custom || rpcMethod(scope) {
		return scope
	}
	method, route, hasRoute := strings.Cut(scope, " ")
	if knownMethod(method) {
		return scope
	}
	if !hasRoute {
		return otherMethod
	}
	return otherMethod + " " + route
}

// rpcMethod reports whether scope is an RPC's full method name
// ("/pkg.Service/Method"), the default scope of the gRPC and Connect
// adapters: the server's registered method, one per method, as a route
// template is. (A gRPC server with an unknown-service handler runs stream
// interceptors for names the client picks; its adapter's docs ask for a
// Scope there.)
func rpcMethod(scope string) bool {
	return strings.HasPrefix(scope, "/") && !strings.Contains(scope, " ")
}

// loggedScope is scope as log lines name it: boundedScope.
func (e *Engine) loggedScope(scope string) string { return boundedScope(scope, e.cfg.Scope != "") }

// otherMethod stands for any method outside the standard ones, as in
// OpenTelemetry's HTTP conventions.
const otherMethod = "_OTHER"

func knownMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
}
