package httpcases

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/reqlock/reqlock/httplock"
)

// Framework is one middleware under test: it serves routes, each route's
// handler behind that framework's reqlock middleware, as an app would. The
// end-to-end cases and the safety load (internal/safety/httpload) both run
// on the frameworks of package frameworks.
type Framework struct {
	Name string
	// Handler builds the app for routes: recovery (a 500 marked with
	// RecoveredHeader) outside the lock middleware, and the stand-in auth and
	// timeout middleware (WithUser: the UserHeader's value on the context
	// where the framework's FromContext looks, an Account beside it, a
	// deadline when DeadlineHeader asks for one) before it. With tp, the
	// framework's OpenTelemetry instrumentation (otelhttp, otelgin,
	// otelecho, or a stand-in where there is none) is outermost, starting a
	// server span per request from tp.
	Handler func(tp trace.TracerProvider, routes []Route) http.Handler
	// Listen, when set, serves the routes in place of Handler, for a
	// framework not on net/http that runs its own server (Fiber): it starts
	// the app as Handler describes on 127.0.0.1, closed at cleanup, and
	// returns its base URL.
	Listen func(t testing.TB, tp trace.TracerProvider, routes []Route) string
}

// Serve starts fw's app for routes on 127.0.0.1, closed at cleanup, and
// returns its base URL.
func (fw Framework) Serve(t testing.TB, routes []Route) string {
	return fw.ServeTraced(t, nil, routes)
}

// ServeTraced is Serve under the framework's instrumentation, spans from tp.
func (fw Framework) ServeTraced(t testing.TB, tp trace.TracerProvider, routes []Route) string {
	if fw.Listen != nil {
		return fw.Listen(t, tp, routes)
	}
	srv := httptest.NewServer(fw.Handler(tp, routes))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Route is one route of a test server.
type Route struct {
	Method string
	// Path uses net/http's wildcard syntax: /orders/{id}.
	Path string
	// Lock configures the middleware; its Key is ignored in favour of Key.
	Lock httplock.Config
	// Key says where the middleware takes its key from.
	Key KeySource
	// Handler is the app's handler. The request it gets carries the
	// middleware's context.
	Handler http.Handler
}

// KeyKind is where a key comes from.
type KeyKind int

// Key sources every adapter offers.
const (
	// FromUser is the authenticated user on the context (FromContext).
	FromUser KeyKind = iota
	// FromHeader is a request header (FromHeader).
	FromHeader
	// FromParam is a route parameter (FromPathValue, FromParam).
	FromParam
	// FromQuery is a query parameter (FromQuery).
	FromQuery
	// FromIdempotencyKey is the Idempotency-Key header (IdempotencyKey).
	FromIdempotencyKey
	// FromUserAndIdempotencyKey is the user on the context joined with the
	// Idempotency-Key header (Join(FromContext, IdempotencyKey)): how replay
	// keeps one user's key from reaching another's response.
	FromUserAndIdempotencyKey
	// FromValue is another value on the context (FromContext), under Name:
	// ValueKey(Name) for net/http, Name for Gin and Echo. AccountKey holds
	// an Account, a type no key can be made of; other names hold nothing,
	// as when the lock runs before the middleware that would set them.
	FromValue
)

// KeySource is a key extractor, independent of framework.
type KeySource struct {
	Kind KeyKind
	Name string // header, parameter, query or value name; unused for FromUser
}

// The test stand-in for authentication: the user named in UserHeader ends up
// on the context, under ValueKey(UserKey) for net/http and under UserKey for
// Gin and Echo (c.Set); beside it an Account for that user, under
// ValueKey(AccountKey) for net/http and AccountKey for Gin and Echo.
const (
	UserHeader = "X-User"
	UserKey    = "user"
	AccountKey = "account"
)

// ValueKey is the net/http context key of a value the stand-in auth sets.
type ValueKey string

// Extractors are a framework's own key functions: those that read what the
// framework keeps per request.
type Extractors struct {
	// FromContext reads the value the stand-in auth stored under name.
	FromContext func(name string) httplock.KeyFunc
	// FromParam reads a route parameter.
	FromParam func(name string) httplock.KeyFunc
}

// Key is the KeyFunc for k on a framework with these extractors.
func (x Extractors) Key(k KeySource) httplock.KeyFunc {
	switch k.Kind {
	case FromHeader:
		return httplock.FromHeader(k.Name)
	case FromParam:
		return x.FromParam(k.Name)
	case FromQuery:
		return httplock.FromQuery(k.Name)
	case FromIdempotencyKey:
		return httplock.IdempotencyKey()
	case FromValue:
		return x.FromContext(k.Name)
	case FromUserAndIdempotencyKey:
		return httplock.Join(x.FromContext(UserKey), httplock.IdempotencyKey())
	}
	return x.FromContext(UserKey)
}

// Account is what the stand-in auth puts under AccountKey: a struct, which
// a key extractor cannot turn into a key by itself.
type Account struct{ User string }

// WithUser is the net/http stand-in for auth and timeout middleware.
func WithUser(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u := r.Header.Get(UserHeader); u != "" {
			ctx := context.WithValue(r.Context(), ValueKey(UserKey), u)
			r = r.WithContext(context.WithValue(ctx, ValueKey(AccountKey), Account{User: u}))
		}
		r, cancel := WithDeadline(r)
		defer cancel()
		h.ServeHTTP(w, r)
	})
}

// DeadlineHeader asks the test server for a deadline on the request's
// context, as a Go duration: a server-side timeout, which is not a client
// that went away.
const DeadlineHeader = "X-Test-Deadline"

// WithDeadline returns r with the deadline DeadlineHeader asks for on its
// context, or r itself; cancel when the request is done.
func WithDeadline(r *http.Request) (*http.Request, context.CancelFunc) {
	d, err := time.ParseDuration(r.Header.Get(DeadlineHeader))
	if err != nil {
		return r, func() {}
	}
	ctx, cancel := context.WithTimeout(r.Context(), d)
	return r.WithContext(ctx), cancel
}

// RecoveredHeader marks the 500 the frameworks' recovery middleware writes, so
// that a panic that escaped a middleware shows as one.
const RecoveredHeader = "X-Recovered-Panic"

// Recover is the net/http stand-in for recovery middleware: a panic becomes
// a 500 marked with RecoveredHeader; http.ErrAbortHandler goes on, as net/http
// means it to.
func Recover(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				w.Header().Set(RecoveredHeader, "1")
				w.WriteHeader(http.StatusInternalServerError)
			}
		}()
		h.ServeHTTP(w, r)
	})
}

var wildcard = regexp.MustCompile(`\{([^}]+)\}`)

// ColonPath turns /orders/{id} into /orders/:id for Gin and Echo.
func ColonPath(p string) string { return wildcard.ReplaceAllString(p, ":$1") }
