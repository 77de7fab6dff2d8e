package echo5lock

import (
	"context"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v5"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
)

// New returns middleware that runs at most one request per key at a time,
// configured as httplock.Config says, with DefaultConfig's Echo fields. It
// panics if cfg is invalid, as WithConfig does.
func New(cfg httplock.Config) echo.MiddlewareFunc {
	c := DefaultConfig
	c.Lock = cfg
	return WithConfig(c)
}

// WithConfig returns the middleware for cfg. It panics if cfg is invalid, a
// mistake to catch at start-up; ToMiddleware returns the error instead.
func WithConfig(cfg Config) echo.MiddlewareFunc {
	mw, err := cfg.ToMiddleware()
	if err != nil {
		panic(err)
	}
	return mw
}

// ToMiddleware returns the middleware for cfg, or an error wrapping
// httplock.ErrInvalidConfig that names the field of cfg.Lock (nil Locker or
// Key, negative durations, …). It makes Config an
// echo.MiddlewareConfigurator.
//
// Register the middleware after middleware.Recover and your auth
// middleware: Recover must be outside it to receive a handler's panic (the
// lock is released first), and auth must have run for FromContext to find
// the user. The default scope is method + c.Path(), set by Echo's routing
// before any middleware runs, so it is per route under e.Use too; a
// request no route matched runs unlocked (Echo answers 404).
func (cfg Config) ToMiddleware() (echo.MiddlewareFunc, error) {
	if cfg.Skipper == nil {
		cfg.Skipper = DefaultConfig.Skipper
	}
	if cfg.ErrorHandler == nil {
		cfg.ErrorHandler = DefaultConfig.ErrorHandler
	}
	e, err := httplock.NewKeyedEngine(cfg.Lock)
	if err != nil {
		return nil, fmt.Errorf("echo5lock: %w", err)
	}
	lock := e.Config()
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c *echo.Context) error {
			if cfg.Skipper(c) {
				return next(c)
			}
			if cfg.BeforeFunc != nil {
				cfg.BeforeFunc(c)
			}
			req, res := c.Request(), c.Response()
			scope := e.Scope(req.Method, c.Path())
			if scope == "" { // no route matched: Echo answers 404, with nothing to lock
				return next(c)
			}
			kreq := echoContext.With(req, c)
			key, kerr := lock.Key(kreq)
			var herr error
			// failed is where the status below finds the handler's error: a
			// box of its own, so that herr stays on the stack when
			// telemetry is off.
			var failed *error
			rw := res
			if lock.Telemetry != nil {
				if er, err := echo.UnwrapResponse(res); err == nil {
					failed = new(error)
					rw = httplock.ReportingStatus(res, func() int { return sentStatus(er.Committed, er.Status, *failed) })
				}
			}
			_, rej := e.ServeResponse(rw, req, scope, key, kerr, func(ctx context.Context, w http.ResponseWriter) error {
				if ctx != req.Context() {
					c.SetRequest(req.WithContext(ctx))
					defer c.SetRequest(req) // the lock's context ends with this call
				}
				if w == rw {
					herr = next(c)
					if failed != nil {
						*failed = herr
					}
					return nil // replay is off: nothing is recorded
				}
				// Replay records what passes through w; an Echo response
				// over it keeps Committed, Status and hooks working inside.
				inner := echo.NewResponse(w, c.Logger())
				c.SetResponse(inner)
				defer c.SetResponse(res)
				herr = next(c)
				switch {
				case herr == nil:
					return nil
				case inner.Committed:
					// The handler failed after its response went out
					// (c.Stream whose reader broke): not an answer.
					return herr
				}
				// Rendered now, not after the lock is gone, so that the
				// error's response is recorded like any other; returned
				// still, for outer middleware.
				c.Echo().HTTPErrorHandler(c, herr)
				return nil
			})
			// A replayed request returns nil: its response is written.
			if rej != nil {
				lock.Respond(res, kreq, rej)
				return cfg.ErrorHandler(c, rej)
			}
			return herr
		}
	}, nil
}

// LockFrom returns the lock the middleware holds for the request while the
// handler runs: the one on c.Request()'s context (core.FromContext), which is
// cancelled with cause core.ErrLockLost if the lock is lost.
func LockFrom(c *echo.Context) (*core.Lock, bool) {
	return core.FromContext(c.Request().Context())
}
