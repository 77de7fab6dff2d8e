package httplock

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/reqlock/reqlock/core"
)

// Engine is the one acquire → run → release flow behind every reqlock
// middleware: the net/http one here and the Gin and Echo adapters. It
// decides; the adapter extracts the key, runs its chain and writes (or
// returns) the response. Its methods are safe for concurrent use.
type Engine struct {
	cfg     Config
	replay  *replayOpts // nil: replay off
	tel     *telemetry  // nil: telemetry off
	waiting waiters
	noValue sync.Once // warns of ErrNoContextValue

	// sem hands out the permits requests hold instead of the Locker's
	// locks when Limit > 1; nil otherwise.
	sem *core.Semaphore

	// durabilityChecked is closed once the start-up check of whether
	// replay records survive a restart of the store is over (at once when
	// there is nothing to check).
	durabilityChecked chan struct{}
}

// NewEngine checks cfg and fills its defaults. Key may be nil: adapters
// extract keys themselves and pass them to Serve. The error is a
// *ConfigError, which wraps ErrInvalidConfig.
//
// With Replay on a store that can tell (store.Durability: Redis asks
// CONFIG GET appendonly and save), it asks, in the background and for at
// most two seconds, whether records survive a restart of the store, and logs a
// warning when they will not, or when the store cannot tell (a Redis whose
// CONFIG is renamed or refused): once per Logger and Locker.
func NewEngine(cfg Config) (*Engine, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, durabilityChecked: make(chan struct{})}
	if cfg.Limit > 1 {
		e.sem = cfg.Locker.Semaphore(cfg.Limit)
	}
	if cfg.Replay != nil {
		if e.replay, err = cfg.Replay.withDefaults(cfg.Locker); err != nil {
			return nil, err
		}
	}
	if cfg.Telemetry != nil {
		if e.tel, err = newTelemetry(cfg.Telemetry, cfg); err != nil {
			return nil, err
		}
	}
	if e.replay != nil {
		e.checkDurability(e.durabilityChecked)
	} else {
		close(e.durabilityChecked)
	}
	return e, nil
}

// NewKeyedEngine is NewEngine for a middleware that takes each request's
// key with Config.Key, which must then be set: New and the framework
// adapters build their engine with it.
func NewKeyedEngine(cfg Config) (*Engine, error) {
	if cfg.Key == nil {
		return nil, badField("Key", "is nil", nil)
	}
	return NewEngine(cfg)
}

// Config returns the configuration with its defaults filled in.
func (e *Engine) Config() Config { return e.cfg }

// Scope is the lock scope of a request: Config.Scope when set, otherwise
// DefaultScope(method, route); "" when neither Scope nor the route is
// known, which the engine answers with ErrRouteUnknown.
func (e *Engine) Scope(method, route string) string {
	switch {
	case e.cfg.Scope != "":
		return e.cfg.Scope
	case route == "":
		return ""
	}
	return DefaultScope(method, route)
}

// ServeRequest runs next under the lock for key in scope and returns nil,
// or returns why it did not run next, as Serve does with r's context. In
// Wait mode, a request about to wait first has up to WaitBodyLimit bytes of
// its body read into memory (r.Body is replaced by one that yields the same
// bytes), so that a client that leaves while it waits is noticed. It cannot
// replay (it has no writer): with Config.Replay set it answers 500; use
// ServeResponse, or ServeRecorded for an answer that is bytes.
func (e *Engine) ServeRequest(r *http.Request, scope, key string, keyErr error, next func(context.Context)) *Rejection {
	_, rej := e.serve(r.Context(), r, nil, scope, key, keyErr, func(ctx context.Context, _ http.ResponseWriter) error {
		next(ctx)
		return nil
	})
	return rej
}

// ServeResponse is ServeRequest for an adapter that hands the engine the
// writer its handlers write to, which it must do for Config.Replay: next
// gets the writer to give the handler (w itself when replay is off, else
// one that records what passes through). When the key has a recorded
// response for this request, the engine writes it to w and reports
// replayed: next did not run, and the adapter must stop its chain without
// writing anything more. A rejection is the adapter's to answer, as for
// ServeRequest.
//
// next returns nil when the handler answered, or an error when it failed
// after its response had started to go out (an Echo handler's error once
// the response is committed, a Gin render that broke off): what the client
// got may be cut short and is no answer to replay, so it is not recorded,
// as for a panic, and a retry runs the handler. The engine does nothing
// else with the error; reporting it stays the adapter's.
func (e *Engine) ServeResponse(w http.ResponseWriter, r *http.Request, scope, key string, keyErr error, next func(ctx context.Context, w http.ResponseWriter) error) (replayed bool, rej *Rejection) {
	return e.serve(r.Context(), r, w, scope, key, keyErr, next)
}

// Serve runs next under the lock for key in scope and returns nil, or
// returns why it did not run next. keyErr is the extractor's error, if any:
// ErrNoContextValue counts as no key (warned about once), except with
// KeyRequired, where it is the server's fault; so is an error wrapping
// ErrKeyMisconfigured (500, logged as an error at most once per burst); any
// other is the client's (400). It has no request body to read ahead of
// a wait (see ServeRequest), and cannot replay (see ServeResponse and
// ServeRecorded).
//
// next gets a context derived from ctx that carries the lock
// (core.FromContext) and is cancelled with cause core.ErrLockLost if the lock
// is lost meanwhile. The lock is released when next returns or panics, on a
// context detached from ctx, bounded by StoreTimeout (a release the store
// fails is retried in the background until the lease ends); a panic then
// goes on up to the framework's recovery. A request without a key (key ==
// "" and not KeyRequired) and a fail-open request run next with ctx
// itself, unlocked.
func (e *Engine) Serve(ctx context.Context, scope, key string, keyErr error, next func(context.Context)) *Rejection {
	_, rej := e.serve(ctx, nil, nil, scope, key, keyErr, func(ctx context.Context, _ http.ResponseWriter) error {
		next(ctx)
		return nil
	})
	return rej
}

// serve is the one acquire → run → release flow: Serve, and ServeRequest
// when r is not nil, and ServeResponse when w is not nil too.
func (e *Engine) serve(ctx context.Context, r *http.Request, w http.ResponseWriter, scope, key string, keyErr error, next func(context.Context, http.ResponseWriter) error) (replayed bool, rej *Rejection) {
	if e.tel == nil {
		return e.run(ctx, r, w, scope, key, keyErr, next, nil)
	}
	return e.serveObserved(ctx, r, w, scope, key, keyErr, next)
}

// serveObserved is serve with telemetry on: the request is counted even
// when its handler panics.
func (e *Engine) serveObserved(ctx context.Context, r *http.Request, w http.ResponseWriter, scope, key string, keyErr error, next func(context.Context, http.ResponseWriter) error) (replayed bool, rej *Rejection) {
	var o observation
	returned := false
	defer func() { e.tel.record(ctx, scope, &o, rej, !returned) }()
	replayed, rej = e.run(ctx, r, w, scope, key, keyErr, next, &o)
	returned = true
	return replayed, rej
}

// run is serve's flow; o, when not nil, takes notes for telemetry.
func (e *Engine) run(ctx context.Context, r *http.Request, w http.ResponseWriter, scope, key string, keyErr error, next func(context.Context, http.ResponseWriter) error, o *observation) (replayed bool, rej *Rejection) {
	if scope == "" {
		logBurst(e.cfg.Logger, slog.LevelError, "reqlock: the request's route is unknown where the lock middleware runs, so every route of a method would share one lock; answering 500."+
			" The middleware wraps a whole mux, or runs before the router (chi's router-wide r.Use): wrap each route's handler instead (ServeMux: mux.Handle(pattern, lock(h)); chi: r.With(lock).Post(path, h)), or set Config.Scope",
			e, ErrRouteUnknown, logOutcome, OutcomeRouteUnknown)
		return false, reject(ErrRouteUnknown, nil, 0)
	}
	switch {
	case errors.Is(keyErr, ErrNoContextValue) && e.cfg.KeyRequired:
		// The key comes from what the server's own middleware sets: the
		// client can do nothing about it. Usually the lock runs before
		// that middleware, and then every request of the route fails.
		logged := e.loggedScope(scope)
		logBurst(e.cfg.Logger, slog.LevelError, "reqlock: no value on the request context for the lock key, on a route that requires one; answering 500. Is the lock middleware placed before the one that sets the value?", logged, keyErr,
			logScope, logged, logOutcome, OutcomeKeyMisconfigured, logReason, reasonNoContextValue)
		return false, reject(ErrKeyMisconfigured, keyErr, 0)
	case errors.Is(keyErr, ErrNoContextValue):
		e.warnNoValue(scope)
		key, keyErr = "", nil
	case errors.Is(keyErr, ErrKeyMisconfigured):
		logged := e.loggedScope(scope)
		logBurst(e.cfg.Logger, slog.LevelError, "reqlock: the lock key cannot be made from what the server put on the request; answering 500", logged, keyErr,
			logScope, logged, logOutcome, OutcomeKeyMisconfigured)
		return false, reject(ErrKeyMisconfigured, keyErr, 0)
	}
	switch {
	case keyErr != nil:
		return false, reject(ErrKeyInvalid, keyErr, 0)
	case key == "" && e.cfg.KeyRequired:
		return false, reject(ErrKeyMissing, nil, 0)
	case key == "":
		if o != nil {
			o.outcome, o.w = OutcomeUnlocked, w
		}
		_ = next(ctx, w) // unlocked: there is nothing to record
		return false, nil
	case len(key) > MaxKeyLen:
		return false, reject(ErrKeyTooLong, nil, 0)
	}
	rp := e.replay
	var fingerprint []byte
	if rp != nil {
		if w == nil {
			logged := e.loggedScope(scope)
			logBurst(e.cfg.Logger, slog.LevelError, "reqlock: Config.Replay needs an adapter that calls Engine.ServeResponse; answering 500", logged, errNoWriter,
				logScope, logged, logOutcome, OutcomeMisconfigured)
			return false, reject(ErrInvalidConfig, errNoWriter, 0)
		}
		if rw, ok := w.(*recordedWriter); ok { // ServeRecorded: the adapter's
			if fingerprint, rej = e.recordedFingerprint(scope, rw); rej != nil {
				return false, rej
			}
		} else {
			body, rej := e.readBody(ctx, r, rp.maxRequest)
			if rej != nil {
				return false, rej
			}
			fingerprint = rp.fingerprint(r, body)
		}
	}
	ahead := r // whose body a wait reads ahead
	if rp != nil {
		ahead = nil // read whole already, for the fingerprint
	}
	var start time.Time
	if o != nil {
		start = time.Now()
	}
	lk, record, rej := e.acquire(ctx, ahead, scope, LockKey(scope, key), rp != nil)
	if o != nil {
		o.waited, o.tried = time.Since(start), true
	}
	switch {
	case rej != nil:
		return false, rej
	case record != nil:
		if o != nil {
			o.outcome, o.w = OutcomeReplayed, w
		}
		return e.replayRecord(w, r, scope, record, fingerprint)
	case lk == nil: // fail-open
		if o != nil {
			o.outcome, o.w = OutcomeFailOpen, w
		}
		_ = next(ctx, w) // unlocked: there is nothing to record
		return false, nil
	}
	if rp != nil {
		return e.runRecorded(ctx, w, scope, lk, fingerprint, next, o)
	}
	lctx, cancel := lk.WithContext(ctx)
	if o != nil {
		o.outcome, o.w = OutcomeLocked, w
	}
	defer func() {
		if o != nil && errors.Is(context.Cause(lctx), core.ErrLockLost) {
			o.outcome = OutcomeLockLost
		}
		cancel()
		e.release(ctx, lk, scope)
	}()
	_ = next(lctx, w) // nothing to record
	return false, nil
}

// warnNoValue says, once per middleware, that a key extractor found no value
// on the context of a route that does not require a key: right for an
// anonymous request now and then, but when the lock runs before the
// middleware that sets the value, every request runs unlocked.
func (e *Engine) warnNoValue(scope string) {
	e.noValue.Do(func() {
		e.cfg.Logger.Warn("reqlock: no value on the request context for the lock key; running requests without it unlocked"+
			" (logged once). Is the lock middleware placed before the one that sets the value?",
			logScope, e.loggedScope(scope), logReason, reasonNoContextValue)
	})
}

// acquire takes the lock (or, with Limit > 1, a permit) by the mode. It
// returns the lock, or the key's
// record (only withRecord: the acquire and the look-up are one round trip),
// or a rejection, or none of them: the store failed and FailOpen says to
// run anyway.
func (e *Engine) acquire(ctx context.Context, r *http.Request, scope, key string, withRecord bool) (*core.Lock, []byte, *Rejection) {
	wctx := ctx
	if withRecord && e.cfg.Locker.MarksRuns() && !e.cfg.Locker.RecordsInUnit() {
		// The run's mark (runRecorded) rides on the acquire where the
		// store can: one round trip less for a first request.
		wctx = core.ContextWithRunMark(ctx, e.replay.retention, e.replay.doubt)
	}
	if e.cfg.Mode == Wait {
		// MaxWait bounds all of the wait, the first attempt included: a
		// store slow to answer it does not get StoreTimeout on top.
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(wctx, e.cfg.MaxWait)
		defer cancel()
	}
	tctx, cancel := context.WithTimeout(wctx, e.cfg.StoreTimeout)
	var lk *core.Lock
	var record []byte
	var err error
	if withRecord {
		lk, record, err = e.cfg.Locker.TryObtainOrRecord(tctx, key)
	} else {
		lk, err = e.tryObtain(tctx, key)
	}
	cancel()
	switch {
	case err == nil:
		return lk, record, nil
	case !errors.Is(err, core.ErrNotObtained):
		lk, rej := e.storeFailed(ctx, scope, err)
		return lk, nil, rej
	case e.cfg.Mode == Wait:
		return e.wait(ctx, wctx, r, scope, key, err, withRecord)
	}
	return nil, nil, e.busy(err)
}

// storeFailed handles an error that is not "someone else holds it": the
// client left, or the store failed and we fail open or closed.
//
// The warnings are one burst per Locker, whichever routes see the outage:
// reqlock.scope names the route that logged it.
func (e *Engine) storeFailed(ctx context.Context, scope string, err error) (*core.Lock, *Rejection) {
	if clientGone(ctx) {
		return nil, reject(ErrClientGone, err, 0)
	}
	if e.cfg.FailOpen {
		logBurst(e.cfg.Logger, slog.LevelWarn, "reqlock: lock store unavailable; running requests unlocked (fail-open)", e.cfg.Locker, err,
			logScope, e.loggedScope(scope), logOutcome, OutcomeFailOpen)
		return nil, nil
	}
	logBurst(e.cfg.Logger, slog.LevelWarn, "reqlock: lock store unavailable; answering 503", e.cfg.Locker, err,
		logScope, e.loggedScope(scope), logOutcome, OutcomeUnavailable)
	return nil, reject(ErrUnavailable, err, retryAfter(e.cfg.RetryAfter, 0))
}

// release gives the lock back on a context detached from the request, so a
// client that left cannot leave the lock behind. A release the store did not
// answer is retried by the Lock itself, in the background, until it is done
// or the lease has run out; here it is only logged, and the response does
// not wait for those retries.
func (e *Engine) release(ctx context.Context, lk *core.Lock, scope string) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.StoreTimeout)
	defer cancel()
	err := lk.Release(rctx)
	if err != nil && !errors.Is(err, core.ErrNotHeld) {
		logBurst(e.cfg.Logger, slog.LevelWarn, "reqlock: release failed; retrying it in the background until the lease ends", e.cfg.Locker, err,
			logScope, e.loggedScope(scope), logReason, reasonReleaseFailed)
	}
}

// clientGone reports whether the request's context ended because the client
// went away: net/http cancels it when the connection closes. A deadline that
// a timeout middleware put on it is not that: the client still waits for an
// answer (409 while the key is held, 503 when the store did not answer in
// time), and writing none would let net/http send an empty 200.
func clientGone(ctx context.Context) bool { return errors.Is(ctx.Err(), context.Canceled) }
