package grpclock

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
)

// Mode says what a call does when another call with the same key is in
// flight: httplock.Reject (the default) or httplock.Wait.
type Mode = httplock.Mode

// The modes, as in httplock.
const (
	// Reject answers a duplicate at once with Aborted and RetryInfo.
	Reject = httplock.Reject
	// Wait queues a duplicate for up to MaxWait and then runs it; past
	// MaxWait it gets Aborted as in Reject mode.
	Wait = httplock.Wait
)

// Config says how the interceptors lock. Locker and Key are required; every
// other zero field takes httplock's default.
type Config struct {
	// Locker takes the locks. Share one per store across interceptors.
	Locker *core.Locker

	// Key extracts the raw key of a call: FromMetadata, FromContext,
	// FromRequest or Join of them. "" means no key: the call runs
	// unlocked, or is refused when KeyRequired is set.
	Key KeyFunc

	// Mode is Reject (the default) or Wait.
	Mode Mode

	// Limit is how many calls of a key may run at once (default 1; 0 and 1
	// mean one), as httplock.Config.Limit: with Limit > 1 each call holds
	// a permit of the key's core.Semaphore, and a call that finds the key
	// full gets ResourceExhausted with RetryInfo (at once in Reject mode,
	// past MaxWait in Wait mode). The Locker's store must keep permits
	// (not Redlock), and Replay is refused beside it.
	Limit int

	// MaxWait bounds the whole time a call spends getting its key in Wait
	// mode (default httplock.DefaultMaxWait); the call's own deadline may
	// end it sooner.
	MaxWait time.Duration

	// StoreTimeout bounds each store call: an attempt to take the lock
	// and the release (default httplock.DefaultStoreTimeout).
	StoreTimeout time.Duration

	// FailOpen runs the handler unlocked when the store is unavailable.
	// The default, fail-closed, answers Unavailable with RetryInfo.
	FailOpen bool

	// KeyRequired refuses a call without a key: InvalidArgument when the
	// key comes from what the client sends, Internal (logged) when it comes
	// from the context (FromContext), which only the server sets.
	KeyRequired bool

	// Logger receives the store and key warnings and errors (default
	// slog.Default()).
	Logger *slog.Logger

	// MaxWaiters caps the calls waiting for one key in this interceptor on
	// this instance in Wait mode (default httplock.DefaultMaxWaiters); one
	// more gets ResourceExhausted. Negative means no cap.
	MaxWaiters int

	// Scope names the lock space. Empty means the call's full method name
	// ("/pkg.Service/Method"), so each method locks on its own; methods
	// whose interceptors share a Scope share one lock per key.
	Scope string

	// Replay, when set, records the first response message of a unary
	// call's key and returns it to a later call with the key and the same
	// request, without running the handler (see ReplayConfig). Streams are
	// locked, never replayed. nil: off. The Locker's store must keep
	// records, as for httplock.Config.Replay.
	Replay *ReplayConfig

	// Telemetry, when set, turns on the engine's metrics and span
	// annotations (see httplock.Config.Telemetry), with the full method
	// name (or Scope) as reqlock.scope. nil: off.
	Telemetry *core.Telemetry
}

// ReplayConfig turns the unary interceptor into an idempotency layer: the
// first response message of a key is recorded, in the store round trip that
// releases the lock, and a later call with the key, the same method and an
// equal request message gets it again, with the header metadata
// "idempotent-replayed: true", instead of running the handler. The same key
// with another request is FailedPrecondition. A call that ends in an error
// is not recorded: a retry runs the handler. Messages must be protobuf
// messages (the request's encoding is its fingerprint, the response's
// encoding and type name its record); the response type must be linked into
// every instance that may replay it.
type ReplayConfig struct {
	// Retention is how long a response is replayed (default
	// httplock.DefaultRetention, 24 h). Afterwards the key is free again.
	Retention time.Duration

	// MaxResponse is the largest record kept, in bytes: the response's
	// encoding and its type name (default httplock.DefaultMaxResponseBody,
	// 1 MiB). A larger response is sent as usual and not recorded.
	MaxResponse int
}

// httplock is the engine's form of c.
func (c *ReplayConfig) httplock() *httplock.ReplayConfig {
	if c == nil {
		return nil
	}
	return &httplock.ReplayConfig{Retention: c.Retention, MaxResponseBody: c.MaxResponse}
}

// engine builds the one flow every reqlock middleware runs. It panics if
// cfg is invalid, a mistake to catch at start-up.
func (cfg Config) engine(caller string) *httplock.Engine {
	if cfg.Key == nil {
		panic(fmt.Errorf("%s: Config.Key is nil: %w", caller, httplock.ErrInvalidConfig))
	}
	e, err := httplock.NewEngine(httplock.Config{
		Locker:       cfg.Locker,
		Mode:         cfg.Mode,
		Limit:        cfg.Limit,
		MaxWait:      cfg.MaxWait,
		StoreTimeout: cfg.StoreTimeout,
		FailOpen:     cfg.FailOpen,
		KeyRequired:  cfg.KeyRequired,
		Logger:       cfg.Logger,
		Scope:        cfg.Scope,
		MaxWaiters:   cfg.MaxWaiters,
		Replay:       cfg.Replay.httplock(),
		Telemetry:    cfg.Telemetry,
	})
	if err != nil {
		panic(fmt.Errorf("%s: %w", caller, err))
	}
	return e
}

// scope is the lock scope of a call to fullMethod.
func (cfg Config) scope(fullMethod string) string {
	if cfg.Scope != "" {
		return cfg.Scope
	}
	return fullMethod
}
