package ginlock

import (
	"context"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
)

// New returns Gin middleware that runs at most one request per key at a
// time, configured as httplock.Config says: Key is httplock's (FromHeader,
// IdempotencyKey, …) or Gin's (FromContext, FromParam), and Respond writes
// to c.Writer (ContextOf finds the *gin.Context). It panics if cfg is
// invalid (nil Locker or Key, negative durations), a mistake to catch at
// start-up; the message names the field (httplock.ConfigError).
//
// Put it after your recovery and auth middleware: recovery must be outside
// it to receive a handler's panic (the lock is released first), and auth
// must have run for FromContext to find the user. The default scope is
// method + c.FullPath(), set by Gin's routing before any middleware runs,
// so it is per route under r.Use too; a request no route matched runs
// unlocked (Gin answers 404).
func New(cfg httplock.Config) gin.HandlerFunc {
	e, err := httplock.NewKeyedEngine(cfg)
	if err != nil {
		panic(fmt.Errorf("ginlock.New: %w", err))
	}
	cfg = e.Config()
	return func(c *gin.Context) {
		req := c.Request
		scope := e.Scope(req.Method, c.FullPath())
		if scope == "" { // no route matched: Gin answers 404, with nothing to lock
			c.Next()
			return
		}
		kreq := ginContext.With(req, c)
		key, kerr := cfg.Key(kreq)
		orig := c.Writer
		replayed, rej := e.ServeResponse(orig, req, scope, key, kerr, func(ctx context.Context, w http.ResponseWriter) error {
			if lk, ok := core.FromContext(ctx); ok && ctx != req.Context() {
				c.Request = req.WithContext(ctx)
				c.Set(lockKey{}, lk)
				defer func() { // the lock's context ends with this call
					c.Request = req
					c.Delete(lockKey{})
				}()
			}
			var broken bool
			if w != http.ResponseWriter(orig) { // replay records the response
				c.Writer = recordingWriter{orig, w, &broken}
				defer func() { c.Writer = orig }()
			}
			n := len(c.Errors)
			c.Next()
			if len(c.Errors) > n {
				// Gin's way to say a handler failed, and neither is an
				// answer to replay: a render that broke off half-way
				// (c.DataFromReader, c.JSON over a closed connection),
				// whose run is in doubt, and an error a handler left for
				// an outer middleware to render after the lock is gone
				// (c.AbortWithError), which ends its run.
				if broken {
					return c.Errors.Last()
				}
				return httplock.Failed(c.Errors.Last())
			}
			return nil
		})
		switch {
		case rej != nil:
			cfg.Respond(c.Writer, kreq, rej)
			c.Abort()
		case replayed:
			c.Abort()
		}
	}
}

type lockKey struct{}

// LockFrom returns the lock the middleware holds for the request, while the
// rest of the chain runs. c.Request.Context() carries it too
// (core.FromContext), and is cancelled with cause core.ErrLockLost if the lock
// is lost.
func LockFrom(c *gin.Context) (*core.Lock, bool) {
	if v, ok := c.Get(lockKey{}); ok {
		lk, ok := v.(*core.Lock)
		return lk, ok
	}
	return core.FromContext(c.Request.Context())
}
