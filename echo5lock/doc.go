// Package echo5lock is reqlock's middleware for Echo v5
// (github.com/labstack/echo/v5): at most one request per key at a time
// across every instance that shares a lock store. A duplicate of a request
// still in flight gets 409 Conflict with Retry-After (Reject mode) or waits
// its turn (Wait mode). For Echo v4 use package echolock; each package
// imports only its own Echo.
//
//	e := echo.New()
//	e.Use(middleware.Recover(), auth) // auth does c.Set("user", userID)
//	e.POST("/orders", createOrder, echo5lock.New(locker, echo5lock.FromContext("user")))
//
// It follows Echo v5's middleware conventions: a Config with Skipper,
// BeforeFunc and ErrorHandler, DefaultConfig, Config.ToMiddleware returning
// the configuration error, and New and WithConfig that panic on it. The
// locking fields are an embedded httplock.Config, so every option the
// engine has is an option here.
//
// What a client sees (statuses, problem bodies, Retry-After, in every case)
// is the table "What a client sees" in the documentation of package
// [github.com/reqlock/reqlock/httplock], the same for every framework: this
// package is a thin skin over httplock's Engine, so waiting, fail-open,
// replay and the rest behave exactly as documented there.
//
// A rejection travels as an *echo.HTTPError for the app's HTTPErrorHandler
// to render: echo.ProblemDetailsHTTPErrorHandler renders it as RFC 9457
// application/problem+json, and so does RenderProblem, with reqlock's
// stable "code" member. errors.As reaches the *httplock.Rejection. The
// handler runs with c.Request()'s context carrying the lock (LockFrom,
// core.FromContext), cancelled with cause core.ErrLockLost if the lock is
// lost. The default scope is method + c.Path().
//
// Take "who" from what your auth middleware verified (FromContext), never
// from a header the client controls; FromHeader and IdempotencyKey are for
// idempotency keys, which the client picks by design.
package echo5lock
