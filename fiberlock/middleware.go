package fiberlock

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"

	"github.com/gofiber/fiber/v3"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
)

// useField is the index of fiber.Route's unexported "use" field, -1 if it
// has none: Fiber exports no other way to tell the route of app.Use
// middleware (a path prefix, matched before any route) from a route's own
// path, and taking the prefix as the route would lock every route under it
// as one.
var useField = func() int {
	if f, ok := reflect.TypeFor[fiber.Route]().FieldByName("use"); ok && f.Type.Kind() == reflect.Bool && len(f.Index) == 1 {
		return f.Index[0]
	}
	return -1
}()

// routePath is the path of the route c matched, or "" when the middleware
// runs under app.Use, before a route is matched.
func routePath(c fiber.Ctx) string {
	route := c.Route()
	if useField >= 0 && reflect.ValueOf(route).Elem().Field(useField).Bool() {
		return ""
	}
	return route.Path
}

// New returns Fiber middleware that runs at most one request per key at a
// time, configured as httplock.Config says: Key is httplock's (FromHeader,
// IdempotencyKey, Join, …) or Fiber's (FromLocals, FromParam), and Respond
// writes to an http.ResponseWriter over Fiber's response (ContextOf finds
// the fiber.Ctx). It panics if cfg is invalid (nil Locker or Key, negative
// durations), a mistake to catch at start-up; the message names the field
// (httplock.ConfigError).
//
// Register it on each route, after your recover and auth middleware:
// app.Post("/orders", fiberlock.New(cfg), createOrder). The default scope
// is method + the route's path (c.FullPath()). Fiber runs app.Use
// middleware before it matches a route, so there the route is unknown:
// every request is answered 500 (route_unknown) unless Config.Scope is set.
func New(cfg httplock.Config) fiber.Handler {
	e, err := httplock.NewKeyedEngine(cfg)
	if err != nil {
		panic(fmt.Errorf("fiberlock.New: %w", err))
	}
	cfg = e.Config()
	replay := cfg.Replay != nil
	wait := cfg.Mode == httplock.Wait
	return func(c fiber.Ctx) error {
		method := c.Method()
		scope := e.Scope(method, routePath(c))
		ctx := c.Context()
		if wait {
			// A waiter whose client left is dropped, as on net/http.
			var stop context.CancelFunc
			ctx, stop = watchClient(ctx, c.RequestCtx().Conn())
			defer stop()
		}
		req := fiberContext.View(ctx, method, c, view{c.Request()})
		if replay {
			fingerprinted(req, c)
		}
		key, kerr := cfg.Key(req)
		w := &writer{resp: c.Response()}
		var chainErr error
		replayed, rej := e.ServeResponse(w, req, scope, key, kerr, func(ctx context.Context, hw http.ResponseWriter) error {
			if ctx != req.Context() { // locked: the handler gets the lock's context
				orig := c.Context()
				c.SetContext(ctx)
				defer c.SetContext(orig)
			}
			if hw != http.ResponseWriter(w) {
				// Replay: the engine may yet answer with a rejection
				// instead of the handler's response (the store's
				// transaction did not commit), which fasthttp holds.
				w.keepHeaders()
			}
			chainErr = c.Next()
			if hw == http.ResponseWriter(w) {
				return chainErr
			}
			// Replay records what the client gets, and Fiber renders a
			// handler's error after the middleware returns: render it
			// now, as the app would.
			if chainErr != nil {
				if chainErr = c.App().ErrorHandler(c, chainErr); chainErr != nil {
					return chainErr
				}
			}
			w.pass(hw)
			return nil
		})
		switch {
		case rej != nil:
			w.undo() // a response of the handler's, if any, is not the answer
			cfg.Respond(w, req, rej)
			return nil
		case replayed:
			return nil
		}
		return chainErr
	}
}

// fingerprinted gives req what replay's fingerprint reads: the path and
// query as sent, and the body, which fasthttp has read whole already.
func fingerprinted(req *http.Request, c fiber.Ctx) {
	uri := c.Request().URI()
	req.URL = &url.URL{Path: string(uri.Path()), RawPath: string(uri.PathOriginal()), RawQuery: string(uri.QueryString())}
	if body := c.Request().Body(); len(body) > 0 {
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
}

// LockFrom returns the lock the middleware holds for the request, while the
// rest of the chain runs. c.Context() carries it too (core.FromContext),
// and is cancelled with cause core.ErrLockLost if the lock is lost.
func LockFrom(c fiber.Ctx) (*core.Lock, bool) { return core.FromContext(c.Context()) }
