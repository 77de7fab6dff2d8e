// Package ginlock is reqlock's middleware for Gin: at most one request per
// key at a time across every instance that shares a lock store. A duplicate
// of a request still in flight gets 409 Conflict with Retry-After (Reject
// mode) or waits its turn (Wait mode).
//
//	r := gin.New()
//	r.Use(gin.Recovery(), auth) // auth does c.Set("user", userID)
//	r.POST("/orders", ginlock.New(httplock.Config{
//		Locker: locker,
//		Key:    ginlock.FromContext("user"),
//	}), createOrder)
//
// The route's settings are an httplock.Config, the same for every
// framework; its Key is any httplock.KeyFunc: httplock's (FromHeader,
// IdempotencyKey, Join, …) or this package's FromContext and FromParam,
// which read Gin's context. What a client sees (statuses, problem bodies,
// Retry-After, in every case) is the table "What a client sees" in the
// documentation of package [github.com/reqlock/reqlock/httplock]: this
// package is a thin skin over httplock's Engine, so waiting, fail-open,
// replay and the rest behave exactly as documented there.
//
// A rejected request is answered (Config.Respond, on c.Writer) and
// aborted; an accepted one runs c.Next() with c.Request's context carrying
// the lock (LockFrom, core.FromContext), cancelled with cause
// core.ErrLockLost if the lock is lost. The default scope is method +
// c.FullPath().
//
// Take "who" from what your auth middleware verified (FromContext), never
// from a header the client controls; FromHeader and IdempotencyKey are for
// idempotency keys, which the client picks by design.
package ginlock
