package httplock

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

// Mode says what a request does when another request with the same key is
// in flight.
type Mode int

const (
	// Reject answers a duplicate at once with 409 Conflict and Retry-After.
	// It is the zero Mode: the safe default for payments and other writes a
	// client should not fire twice.
	Reject Mode = iota
	// Wait queues a duplicate for up to MaxWait and then runs it; past
	// MaxWait it gets 409 as in Reject mode.
	Wait
)

// String returns "reject" or "wait".
func (m Mode) String() string {
	switch m {
	case Reject:
		return "reject"
	case Wait:
		return "wait"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Defaults for the zero fields of a Config.
const (
	// DefaultRetryAfter is the Retry-After hint for a busy key.
	DefaultRetryAfter = time.Second
	// DefaultMaxWait is how long a request may take to get its key in Wait
	// mode.
	DefaultMaxWait = 5 * time.Second
	// DefaultMaxWaiters is how many requests may wait for one key on one
	// instance in Wait mode.
	DefaultMaxWaiters = 64
	// DefaultStoreTimeout bounds each call to the lock store.
	DefaultStoreTimeout = time.Second
	// DefaultWaitBodyLimit is how many bytes of a request body Wait mode
	// reads into memory before the request waits.
	DefaultWaitBodyLimit = 64 << 10
	// MaxKeyLen is the longest key, in bytes, a request may bring (longer:
	// 400). Keys are hashed, so this is about refusing abuse, not storage.
	MaxKeyLen = 1024
)

// Config says how the middleware locks. Locker is required, and Key for New;
// every other zero field takes its default.
type Config struct {
	// Locker takes the locks. Share one per store across middlewares.
	Locker *core.Locker

	// Key extracts the raw key from a request. "" means the request has no
	// key: it runs unlocked, or is refused when KeyRequired is set. An error
	// gets 400, or 500 when it wraps ErrKeyMisconfigured. See the package
	// doc for which sources to trust.
	Key KeyFunc

	// Mode is Reject (the default) or Wait.
	Mode Mode

	// Limit is how many requests of a key may run at once, across every
	// instance sharing the store (default 1: a lock; 0 and 1 mean one).
	// With Limit > 1 a request holds a permit of the key's core.Semaphore
	// instead of its lock, and one more request finds the key full: 429
	// (limit_reached, ErrLimitReached) with Retry-After in Reject mode; in
	// Wait mode it waits in the key's line, bounded by MaxWait and
	// MaxWaiters as for a lock, then 429. The Locker's store must keep
	// permits (Redlock does not: refused, wrapping
	// core.ErrSemaphoreUnsupported), and Replay, which needs one request
	// per key at a time, is refused beside it. A key's permits and its lock
	// are kept apart: routes that share a Scope, one with Limit 1 and one
	// with Limit 3, do not hold each other back; give them one Limit (see
	// docs/semaphore.md).
	Limit int

	// MaxWait bounds the whole time a request spends getting its key in
	// Wait mode, the first attempt included (default DefaultMaxWait);
	// StoreTimeout bounds each store round trip within it. Past it the
	// request gets 409, or 503 when the store had not answered. The
	// request's own context may end it sooner.
	MaxWait time.Duration

	// WaitBodyLimit is how many bytes of a request's body Wait mode reads
	// into memory before the request waits (default DefaultWaitBodyLimit;
	// negative: none). The handler still reads the whole body, unchanged.
	// net/http notices a client that leaves only once the body has been
	// read, so this is what lets a waiting request whose client left be
	// dropped instead of run. A longer body is not read ahead: net/http
	// cannot tell that such a client left, so its request may still run
	// when the key comes free. The body is read beside the wait, so a slow
	// upload does not use up MaxWait; the handler runs once both are done.
	WaitBodyLimit int64

	// MaxWaiters caps the requests waiting for one key in this middleware
	// on this instance in Wait mode (default DefaultMaxWaiters); one more
	// gets 429. Negative means no cap. Routes that share a Scope through
	// middlewares of their own have a cap each.
	MaxWaiters int

	// RetryAfter is the hint sent in Retry-After (default 1s), rounded up to
	// whole seconds. For a busy key it is cut to the holder's remaining lease.
	RetryAfter time.Duration

	// Scope names the lock space. Empty means method + route template, so
	// each route locks on its own; routes that give the same Scope share
	// one lock per key. The scope is hashed together with the key.
	Scope string

	// KeyRequired answers a request without a key instead of running it
	// unlocked: 400 (key_missing) when the key comes from what the client
	// sends (a header, query or route parameter); 500 (key_misconfigured,
	// logged as an error at most once per burst) when it comes from the
	// request's context (FromContext: ErrNoContextValue), which only the
	// server's own middleware sets.
	KeyRequired bool

	// FailOpen runs the handler unlocked when the store is unavailable.
	// The default, fail-closed, answers 503 with Retry-After. Either way a
	// warning is logged at most once per burst (10s) per Logger: routes
	// that share a Logger share the burst.
	FailOpen bool

	// StoreTimeout bounds each store call the middleware makes: an
	// attempt to take the lock (while waiting, each attempt, all within
	// MaxWait) and the release (default DefaultStoreTimeout). A store that
	// does not answer in time counts as unavailable.
	StoreTimeout time.Duration

	// Logger receives the store, release and key warnings and errors
	// (default slog.Default()).
	Logger *slog.Logger

	// Respond writes the response for a request that does not reach the
	// handler (default WriteProblem). Switch on the reason with errors.Is;
	// call WriteProblem for the cases you do not change.
	Respond func(w http.ResponseWriter, r *http.Request, rej *Rejection)

	// Replay, when set, records the first response to each key and replays
	// it to later requests with the same key (see ReplayConfig). nil: off.
	// The Locker's store must keep records: redisstore.Store and memorystore.Store do,
	// redlock.Store does not, and is refused with ErrInvalidConfig. Records
	// survive a restart of the store only if it persists them (Redis:
	// appendonly yes; RDB snapshots lose the records since the last one);
	// at start-up the middleware asks a store that can tell
	// (store.Durability) and warns when they will not survive one.
	Replay *ReplayConfig

	// Telemetry, when set, turns on the middleware's OpenTelemetry metrics
	// and annotates each request's span; nil: off, and the request path
	// does no telemetry work. A nil provider in it is the global one, read
	// when the middleware is built. reqlock uses the OpenTelemetry API
	// only: the application picks the SDK and exporter.
	//
	// Metrics (the Meter is named "github.com/reqlock/reqlock/httplock"):
	//
	//	reqlock.http.requests        Counter {request}: every request, with
	//	                             reqlock.scope, reqlock.outcome and, when
	//	                             known, http.response.status_code
	//	reqlock.http.wait.duration   Histogram s: the time spent getting the
	//	                             key (the one attempt in Reject mode),
	//	                             with reqlock.scope and reqlock.outcome
	//
	// reqlock.outcome is one of the Outcome constants: locked, unlocked,
	// fail_open, lock_lost, replayed, rejected, wait_timeout,
	// limit_reached, limit_wait_timeout, too_many_waiters, unavailable,
	// client_gone, key_missing, key_invalid, key_too_long,
	// key_misconfigured, fingerprint_mismatch, body_too_large,
	// body_unreadable, record_unreadable, misconfigured, route_unknown.
	// With Limit > 1, locked means holding one of the key's permits, and a
	// full key is limit_reached (limit_wait_timeout after a wait), never
	// rejected or wait_timeout: those are duplicates of a one-at-a-time
	// key.
	// The status is the one the engine answered with (Rejection.Status: 499
	// for client_gone; a Respond of your own may send another), the replayed
	// one, or the handler's when its writer tells (always with Replay; Gin,
	// Echo and New otherwise, not Serve or ServeRequest).
	//
	// reqlock.scope is the lock scope: Scope as given, or the default
	// method + route template with a method outside the standard nine
	// (GET, HEAD, POST, PUT, PATCH, DELETE, CONNECT, OPTIONS, TRACE) named
	// "_OTHER", so that the client cannot make new metric streams. Neither
	// the key nor its hash is ever an attribute. A caller of Serve that
	// leaves Scope empty must pass a default-style scope too, or an RPC's
	// full method name ("/pkg.Service/Method"), which is kept as it is.
	//
	// Spans: the middleware makes none of its own. On the request's span
	// (trace.SpanFromContext, as otelhttp, otelgin or otelecho started it),
	// when it is recording, it sets reqlock.outcome and, for a request that
	// did not reach its handler, adds the event reqlock.rejected with
	// reason (the outcome), http.response.status_code and, when there is
	// one, retry_after_s. A noop TracerProvider turns that off, and a noop
	// MeterProvider the metrics. The
	// Locker's reqlock.acquire and reqlock.release spans (core.WithTelemetry)
	// are children of the request's span: the engine passes the request's
	// context to every Locker call.
	Telemetry *core.Telemetry
}

// withDefaults fills zero fields and checks the rest; an error is a
// *ConfigError naming the field.
func (c Config) withDefaults() (Config, error) {
	switch {
	case c.Locker == nil:
		return c, badField("Locker", "is nil", nil)
	case c.Mode != Reject && c.Mode != Wait:
		return c, badField("Mode", fmt.Sprintf("is unknown (%v)", c.Mode), nil)
	case c.MaxWait < 0:
		return c, negative("MaxWait", c.MaxWait)
	case c.RetryAfter < 0:
		return c, negative("RetryAfter", c.RetryAfter)
	case c.StoreTimeout < 0:
		return c, negative("StoreTimeout", c.StoreTimeout)
	case c.Limit < 0:
		return c, negative("Limit", c.Limit)
	case c.Limit > store.MaxLimit:
		return c, badField("Limit", fmt.Sprintf("is over %d (%d)", store.MaxLimit, c.Limit), core.ErrInvalidLimit)
	case c.Limit > 1 && c.Replay != nil:
		return c, badField("Limit", fmt.Sprintf("is %d with Replay set: replay runs one request per key at a time", c.Limit), nil)
	case c.Limit > 1 && !c.Locker.KeepsPermits():
		return c, badField("Limit", fmt.Sprintf("is %d, and the Locker's store keeps no permits", c.Limit), core.ErrSemaphoreUnsupported)
	case c.Replay != nil && !c.Locker.KeepsRecords():
		return c, badField("Replay", "is set, and the Locker's store keeps no records", core.ErrNoRecords)
	}
	if c.Limit == 0 {
		c.Limit = 1
	}
	if c.MaxWait == 0 {
		c.MaxWait = DefaultMaxWait
	}
	if c.MaxWaiters == 0 {
		c.MaxWaiters = DefaultMaxWaiters
	}
	if c.RetryAfter == 0 {
		c.RetryAfter = DefaultRetryAfter
	}
	if c.StoreTimeout == 0 {
		c.StoreTimeout = DefaultStoreTimeout
	}
	if c.WaitBodyLimit == 0 {
		c.WaitBodyLimit = DefaultWaitBodyLimit
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Respond == nil {
		c.Respond = WriteProblem
	}
	return c, nil
}
