package connectlock

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
	// Reject answers a duplicate at once with CodeAborted and RetryInfo.
	Reject = httplock.Reject
	// Wait queues a duplicate for up to MaxWait and then runs it; past
	// MaxWait it gets CodeAborted as in Reject mode.
	Wait = httplock.Wait
)

// Config says how the interceptor locks. Locker and Key are required; every
// other zero field takes httplock's default.
type Config struct {
	// Locker takes the locks. Share one per store across interceptors.
	Locker *core.Locker

	// Key extracts the raw key of a call: FromHeader, FromContext,
	// FromRequest or Join of them. "" means no key: the call runs
	// unlocked, or is refused when KeyRequired is set.
	Key KeyFunc

	// Mode is Reject (the default) or Wait.
	Mode Mode

	// Limit is how many calls of a key may run at once (default 1; 0 and 1
	// mean one), as httplock.Config.Limit: with Limit > 1 each call holds
	// a permit of the key's core.Semaphore, and a call that finds the key
	// full gets CodeResourceExhausted with RetryInfo (at once in Reject
	// mode, past MaxWait in Wait mode). The Locker's store must keep
	// permits (not Redlock), and Replay is refused beside it.
	Limit int

	// MaxWait bounds the whole time a call spends getting its key in Wait
	// mode (default httplock.DefaultMaxWait); the call's own deadline may
	// end it sooner.
	MaxWait time.Duration

	// MaxWaiters caps the calls waiting for one key in this interceptor on
	// this instance in Wait mode (default httplock.DefaultMaxWaiters); one
	// more gets CodeResourceExhausted. Negative means no cap.
	MaxWaiters int

	// StoreTimeout bounds each store call: an attempt to take the lock
	// and the release (default httplock.DefaultStoreTimeout).
	StoreTimeout time.Duration

	// FailOpen runs the handler unlocked when the store is unavailable.
	// The default, fail-closed, answers CodeUnavailable with RetryInfo.
	FailOpen bool

	// KeyRequired refuses a call without a key: CodeInvalidArgument when
	// the key comes from what the client sends, CodeInternal (logged) when
	// it comes from the context (FromContext), which only the server sets.
	KeyRequired bool

	// Logger receives the store and key warnings and errors (default
	// slog.Default()).
	Logger *slog.Logger

	// Scope names the lock space. Empty means the call's procedure
	// ("/pkg.Service/Method"), so each procedure locks on its own;
	// procedures whose interceptors share a Scope share one lock per key.
	Scope string

	// Replay, when set, records the first response message of a unary
	// call's key and returns it to a later call with the key and the same
	// request, without running the handler (see ReplayConfig). Streams are
	// locked, never replayed. nil: off. The Locker's store must keep
	// records, as for httplock.Config.Replay.
	Replay *ReplayConfig

	// Telemetry, when set, turns on the engine's metrics and span
	// annotations (see httplock.Config.Telemetry), with the procedure (or
	// Scope) as reqlock.scope. nil: off.
	Telemetry *core.Telemetry
}

// ReplayConfig turns the interceptor into an idempotency layer for unary
// calls: the first response message of a key is recorded, in the store
// round trip that releases the lock, and a later call with the key, the
// same procedure and an equal request message gets it again, with the
// header "Idempotent-Replayed: true", instead of running the handler. The
// same key with another request is CodeFailedPrecondition. A call that
// ends in an error is not recorded: a retry runs the handler.
//
// Messages must be protobuf messages: the request's encoding is its
// fingerprint (whichever codec the client used, binary or JSON), the
// response's encoding and type name its record, so the response type must
// be linked into every instance that may replay it. A replayed response's
// Any() is a proto.Message of the recorded type behind a wrapper of
// connectlock's, not the handler's own *T: an interceptor outside this one
// that asserts the concrete type sees the difference.
type ReplayConfig struct {
	// Retention is how long a response is replayed (default
	// httplock.DefaultRetention, 24 h). Afterwards the key is free again.
	Retention time.Duration

	// MaxResponse is the largest record kept, in bytes: the response's
	// encoding and its type name (default httplock.DefaultMaxResponseBody,
	// 1 MiB). A larger response is sent as usual and not recorded.
	MaxResponse int
}

// engine builds the one flow every reqlock middleware runs, with replay
// or without.
func (cfg Config) engine(replay bool) (*httplock.Engine, error) {
	if cfg.Key == nil {
		return nil, fmt.Errorf("connectlock: Config.Key is nil: %w", httplock.ErrInvalidConfig)
	}
	hc := httplock.Config{
		Locker:       cfg.Locker,
		Mode:         cfg.Mode,
		Limit:        cfg.Limit,
		MaxWait:      cfg.MaxWait,
		MaxWaiters:   cfg.MaxWaiters,
		StoreTimeout: cfg.StoreTimeout,
		FailOpen:     cfg.FailOpen,
		KeyRequired:  cfg.KeyRequired,
		Logger:       cfg.Logger,
		Scope:        cfg.Scope,
		Telemetry:    cfg.Telemetry,
	}
	if replay && cfg.Replay != nil {
		hc.Replay = &httplock.ReplayConfig{Retention: cfg.Replay.Retention, MaxResponseBody: cfg.Replay.MaxResponse}
	}
	e, err := httplock.NewEngine(hc)
	if err != nil {
		return nil, fmt.Errorf("connectlock: %w", err)
	}
	return e, nil
}

// scope is the lock scope of a call to procedure.
func (cfg Config) scope(procedure string) string {
	if cfg.Scope != "" {
		return cfg.Scope
	}
	return procedure
}
