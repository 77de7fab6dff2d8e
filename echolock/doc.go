// Package echolock is reqlock's middleware for Echo: at most one request per
// key at a time across every instance that shares a lock store. A duplicate
// of a request still in flight gets 409 Conflict with Retry-After (Reject
// mode) or waits its turn (Wait mode).
//
//	e := echo.New()
//	e.Use(middleware.Recover(), auth) // auth does c.Set("user", userID)
//	e.POST("/orders", createOrder, echolock.New(locker, echolock.FromContext("user")))
//
// What a client sees (statuses, problem bodies, Retry-After, in every case)
// is the table "What a client sees" in the documentation of package
// [github.com/reqlock/reqlock/httplock], the same for every framework: this
// package is a thin skin over httplock's Engine, so waiting, fail-open,
// replay and the rest behave exactly as documented there.
//
// It follows Echo's middleware conventions (Config with Skipper, BeforeFunc
// and ErrorHandler; DefaultConfig; New and WithConfig). A rejection travels as an
// *echo.HTTPError (Internal: the *httplock.Rejection) for the app's own
// HTTPErrorHandler to render; RenderProblem renders it as RFC 9457
// application/problem+json. The handler runs with c.Request()'s context
// carrying the lock (LockFrom, core.FromContext), cancelled with cause
// core.ErrLockLost if the lock is lost. The default scope is method +
// c.Path().
//
// Take "who" from what your auth middleware verified (FromContext), never
// from a header the client controls; FromHeader and IdempotencyKey are for
// idempotency keys, which the client picks by design.
package echolock
