package httplock

import (
	"context"
	"net/http"
)

// New returns net/http middleware that runs at most one request per key at
// a time. It panics if cfg is invalid (nil Locker or Key, negative
// durations): a mistake to catch at start-up, not per request. Use
// NewEngine to get the error instead.
//
// The default scope uses r.Pattern, which ServeMux (and chi) set only once
// they have routed the request: wrap each route's handler,
//
//	mux.Handle("POST /orders/{id}", lock(orderHandler))
//	r.With(lock).Post("/orders/{id}", orderHandler) // chi
//
// not the mux itself. Around a whole mux, under chi's router-wide r.Use, or
// under a router that does not set r.Pattern, the route is unknown: every
// request gets 500 (route_unknown, ErrRouteUnknown) and an error log that
// says so, instead of every route of a method sharing one lock. Set
// Config.Scope there.
func New(cfg Config) func(http.Handler) http.Handler {
	e, err := NewKeyedEngine(cfg)
	if err != nil {
		panic(err) // a *ConfigError: "httplock: Config.<Field> …"
	}
	respond := e.cfg.Respond
	observed := e.tel != nil && e.tel.metrics
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// With metrics on, the handler writes to noted (w with the same
			// optional interfaces) and the engine reads the status from w.
			noted := w
			if observed {
				var n statusNote
				noted = n.wrap(w)
				w = ReportingStatus(noted, n.Status)
			}
			key, kerr := cfg.Key(r)
			ctx := r.Context()
			_, rej := e.ServeResponse(w, r, e.Scope(r.Method, r.Pattern), key, kerr, func(lctx context.Context, hw http.ResponseWriter) error {
				if lctx != ctx {
					r = r.WithContext(lctx)
				}
				if observed && hw == w { // only then is w ours, and comparable
					hw = noted
				}
				// A handler that breaks off a response it started panics
				// with http.ErrAbortHandler, which records nothing.
				next.ServeHTTP(hw, r)
				return nil
			})
			if rej != nil {
				respond(w, r, rej)
			}
		})
	}
}
