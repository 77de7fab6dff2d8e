// Package fiberlock is reqlock's middleware for Fiber v3: at most one
// request per key at a time across every instance that shares a lock store.
// A duplicate of a request still in flight gets 409 Conflict with
// Retry-After (Reject mode) or waits its turn (Wait mode).
//
//	app := fiber.New()
//	app.Use(recover.New(), auth) // auth does c.Locals("user", userID)
//	app.Post("/orders", fiberlock.New(httplock.Config{
//		Locker: locker,
//		Key:    fiberlock.FromLocals("user"),
//	}), createOrder)
//
// The route's settings are an httplock.Config, the same for every
// framework; its Key is any httplock.KeyFunc: httplock's (FromHeader,
// FromQuery, IdempotencyKey, Join, …), which read fasthttp's request
// directly, or this package's FromLocals and FromParam, which read the
// fiber.Ctx. What a client sees (statuses, problem bodies with their code,
// Retry-After, replay) is the table "What a client sees" in the
// documentation of package [github.com/reqlock/reqlock/httplock]: this
// package is a thin skin over httplock's Engine, on fasthttp's own types;
// no *http.Request is made from the request.
//
// An accepted request runs c.Next() with c.Context() carrying the lock
// (LockFrom, core.FromContext), cancelled with cause core.ErrLockLost if
// the lock is lost. A rejected one is answered and the chain stops. With
// Config.Replay, a handler's error is rendered by the app's ErrorHandler
// inside the lock, so that the record holds what the client got.
//
// Register the middleware on each route (app.Post(path, fiberlock.New(cfg),
// h)): Fiber runs app.Use middleware before it matches a route, so there
// the route is unknown and every request is answered 500 (route_unknown)
// unless Config.Scope is set.
//
// fasthttp does not tell a handler that its client left. In Wait mode the
// middleware looks (every 20 ms, peeking at the socket without reading
// from it): a waiter whose client left is dropped (client_gone) and never
// runs, and a handler that runs gets a context cancelled when its client
// leaves, as on net/http. On TLS connections, and off Unix, it cannot look:
// such a waiter runs when the key comes free, and leaves no lock behind.
//
// IdempotencyLocker gives Fiber's own idempotency middleware a Locker that
// holds its keys across instances.
//
// Take "who" from what your auth middleware verified (FromLocals), never
// from a header the client controls; FromHeader and IdempotencyKey are for
// idempotency keys, which the client picks by design.
package fiberlock
