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
// the Locker records nothing and its hot path does no telemetry work: one
// nil check per call, not one allocation more. With it, the instruments and
// every attribute set are built once, when the Locker is; a span is only
// started when t's TracerProvider is not the API's noop one
// (go.opentelemetry.io/otel/trace/noop).
//
// # Metrics
//
// Meter "github.com/reqlock/reqlock/core". No attribute ever holds a key,
// its hash, a token or a fence, so the number of streams is bounded:
//
//	name                             kind           unit           attributes
//	reqlock.lock.acquisitions        Counter        {acquisition}  reqlock.store, reqlock.mode, reqlock.outcome
//	reqlock.lock.wait.duration       Histogram      s              reqlock.store, reqlock.mode, reqlock.outcome
//	reqlock.lock.hold.duration       Histogram      s              reqlock.store, reqlock.outcome
//	reqlock.lock.renewals            Counter        {renewal}      reqlock.store, reqlock.outcome
//	reqlock.lock.lost                Counter        {lock}         reqlock.store, reqlock.reason
//	reqlock.lock.held                UpDownCounter  {lock}         reqlock.store
//	reqlock.watchdog.lag             Histogram      s              reqlock.store
//	reqlock.watchdog.batch.duration  Histogram      s              reqlock.store, reqlock.outcome
//	reqlock.leader.terms             Counter        {term}         reqlock.store
//	reqlock.leader.lost              Counter        {term}         reqlock.store
//
// reqlock.store is memory, redis (a single node, or a Sentinel failover
// client), redis_cluster (any *redis.ClusterClient), redlock or other.
// reqlock.mode is try (TryObtain, TryObtainOrRecord) or wait (Obtain,
// ObtainAfter, ObtainOrRecord, ObtainOrRecordAfter, and so Do and Once).
//
// reqlock.lock.acquisitions counts every such call, and
// reqlock.lock.wait.duration times it from call to return, with
// reqlock.outcome:
//   - obtained: the lock was taken;
//   - taken: someone else held the key, also when the caller's deadline ran
//     out while waiting for it (that deadline is the wait's budget);
//   - unavailable: the store failed or did not answer, also when the
//     caller's deadline ran out before it did;
//   - cancelled: the caller's context was cancelled (context.Canceled);
//   - recorded: an ...OrRecord call found the key's record instead.
//
// A call refused for its arguments (ErrEmptyKey, ErrNoRecords) is not
// counted.
//
// reqlock.lock.hold.duration times each lock from obtained to the end of
// its hold, once: outcome released (Release, ReleaseDetached,
// ReleaseRecording, whatever the store answered) or lost.
// reqlock.lock.held goes up when a lock is obtained and down at that same
// end. reqlock.lock.renewals counts each lease extension by the watchdog or
// Refresh: renewed, failed (the store did not answer; retried while the
// lease lasts) or not_held (the lock was gone from the store).
// reqlock.lock.lost counts lost locks by reqlock.reason:
//   - lease_expired: the lease ran out by our clock before a renewal got
//     through (store down or slow, process stalled);
//   - renewal_not_held: a watchdog renewal found the lock gone: expired in
//     the store, deleted, or taken;
//   - refresh_not_held: Refresh found it gone.
//
// reqlock.watchdog.lag is how late each due renewal started after it was
// due (0 when it went early, batched with a lock that was due).
// reqlock.watchdog.batch.duration times each batched Extend round trip,
// outcome ok (the store answered for every lock) or failed.
//
// reqlock.leader.terms counts the terms this process began as leader (Lead,
// Elector.Run), and reqlock.leader.lost those that ended because the lock
// was lost (its lease ran out, or it was gone from the store) rather than
// given up: a rising lost count is leadership flapping.
//
// # Spans
//
// Tracer "github.com/reqlock/reqlock/core". reqlock.acquire covers each
// acquire call named above, waiting included, as a child of the span in
// the caller's context (the request's span under otelhttp, otelgin or
// otelecho), with reqlock.store, reqlock.mode, reqlock.outcome (as in the
// metrics), reqlock.fence when obtained and reqlock.holder_ttl_ms when
// taken and the store said how long; its status is Error when unavailable
// or refused. reqlock.release covers Release, ReleaseDetached and
// ReleaseRecording, with reqlock.store, reqlock.fence and reqlock.outcome:
// released, not_held or unavailable (status Error).
//
// While a lock is held, the span that was current in its acquire's
// context gets, if it is still recording, the events
// reqlock.renewal_failed (reqlock.fence, error: the failure's text) and
// reqlock.lock_lost (reqlock.fence, reqlock.reason). A fence is an Int64
// attribute, or a decimal string for one above 2^63-1.
//
// # Logs
//
// Log lines go to the Locker's logger (WithLogger) whether or not
// telemetry is on, with the attributes reqlock.store_key (the hashed key,
// as StoreKey returns it; never the raw key), reqlock.fence, reqlock.reason
// and error. A lost lock is logged at Error, a renewal that will be retried
// at Debug, and a background release or cancel that gave up at Warn.
func WithTelemetry(t Telemetry) Option {
	return func(l *Locker) { l.telemetry = newTelemetry(t, l.store) }
}
