// Package echo5lock is reqlock's middleware for Echo v5
// (github.com/labstack/echo/v5): at most one request per key at a time
// across every instance that shares a lock store. A duplicate of a request
// still in flight gets 409 Conflict with Retry-After (Reject mode) or waits
// its turn (Wait mode). For Echo v4 use package echolock; each package
// imports only its own Echo.
//
//	e := echo.New()
//	e.HTTPErrorHandler = echo.ProblemDetailsHTTPErrorHandler(false)
//	e.Use(middleware.Recover(), auth) // auth does c.Set("user", userID)
//	e.POST("/orders", createOrder, echo5lock.New(httplock.Config{
//		Locker: locker,
//		Key:    echo5lock.FromContext("user"),
//	}))
//
// The route's settings are an httplock.Config, the same for every
// framework; its Key is any httplock.KeyFunc: httplock's (FromHeader,
// IdempotencyKey, Join, …) or this package's FromContext and FromParam,
// which read Echo's context. What a client sees (statuses, problem bodies,
// Retry-After, in every case) is the table "What a client sees" in the
// documentation of package [github.com/reqlock/reqlock/httplock]: this
// package is a thin skin over httplock's Engine, so waiting, fail-open,
// replay and the rest behave exactly as documented there.
//
// Echo v5's middleware conventions (Skipper, BeforeFunc, ErrorHandler,
// Config.ToMiddleware returning the configuration error) are in Config,
// beside the httplock.Config in its Lock field. A rejection is answered by
// Lock.Respond (default httplock.WriteProblem: application/problem+json with
// reqlock's stable "code", which echo.ProblemError has no member for) and
// returned as an *echo.HTTPError wrapping the *httplock.Rejection
// (ErrorHandler) for Echo's logger and outer middleware; Echo's error
// handlers, echo.ProblemDetailsHTTPErrorHandler among them, leave the
// committed answer alone. The handler runs with c.Request()'s context
// carrying the lock (LockFrom, core.FromContext), cancelled with cause
// core.ErrLockLost if the lock is lost. The default scope is method +
// c.Path().
//
// Take "who" from what your auth middleware verified (FromContext), never
// from a header the client controls; FromHeader and IdempotencyKey are for
// idempotency keys, which the client picks by design.
package echo5lock
