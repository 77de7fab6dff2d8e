// Package echolock is reqlock's middleware for Echo: at most one request per
// key at a time across every instance that shares a lock store. A duplicate
// of a request still in flight gets 409 Conflict with Retry-After (Reject
// mode) or waits its turn (Wait mode).
//
//	e := echo.New()
//	e.Use(middleware.Recover(), auth) // auth does c.Set("user", userID)
//	e.POST("/orders", createOrder, echolock.New(httplock.Config{
//		Locker: locker,
//		Key:    echolock.FromContext("user"),
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
// Echo's own middleware conventions (Skipper, BeforeFunc, ErrorHandler) are
// in Config, beside the httplock.Config in its Lock field, for WithConfig.
// A rejection is answered by Lock.Respond (default httplock.WriteProblem:
// application/problem+json with a stable "code") and returned as an
// *echo.HTTPError (ErrorHandler) for Echo's logger and outer middleware;
// Echo's error handler leaves the committed answer alone. The handler runs
// with c.Request()'s context carrying the lock (LockFrom,
// core.FromContext), cancelled with cause core.ErrLockLost if the lock is
// lost. The default scope is method + c.Path().
//
// Take "who" from what your auth middleware verified (FromContext), never
// from a header the client controls; FromHeader and IdempotencyKey are for
// idempotency keys, which the client picks by design.
package echolock
