package httpload

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"

	"github.com/gin-gonic/gin"
	echo4 "github.com/labstack/echo/v4"
	echo5 "github.com/labstack/echo/v5"

	"github.com/reqlock/reqlock/echo5lock"
	"github.com/reqlock/reqlock/echolock"
	"github.com/reqlock/reqlock/ginlock"
	"github.com/reqlock/reqlock/httplock"
)

// SourceKind is where a route takes its key from.
type SourceKind int

// Key sources every adapter offers for client-supplied keys.
const (
	Header      SourceKind = iota // a request header (FromHeader)
	Query                         // a query parameter (FromQuery)
	Param                         // a route parameter (FromPathValue, FromParam)
	Idempotency                   // the Idempotency-Key header (IdempotencyKey)
	User                          // the user the stand-in auth put on the context (FromContext)
)

// UserHeader names the user for the stand-in auth middleware, which puts it
// on the context under UserKey (net/http: UserCtxKey) for User sources.
const (
	UserHeader = "X-User"
	UserKey    = "user"
)

// UserCtxKey is the net/http context key of the user.
type UserCtxKey struct{}

// Source is a route's key extractor, independent of framework.
type Source struct {
	Kind SourceKind
	Name string // header, query or parameter name
}

// Route is one route of a server under load.
type Route struct {
	Method string
	// Path uses net/http's wildcard syntax: /orders/{id}.
	Path string
	// Lock configures the middleware; its Key and Respond are ignored.
	Lock    httplock.Config
	Key     Source
	Handler http.Handler
}

// PanicHeader marks the 500 the servers' recovery middleware writes, so a
// panic that escaped a middleware shows as one.
const PanicHeader = "X-Recovered-Panic"

// Framework builds a server's handler for routes, with recovery and the
// stand-in auth in front of the lock middleware, as an app would.
type Framework struct {
	Name    string
	Handler func(routes []Route) http.Handler
}

// Serve starts fw's server on 127.0.0.1 with routes; it is closed at
// cleanup (Close may be called before).
func Serve(t testing.TB, fw Framework, routes []Route) *httptest.Server {
	srv := httptest.NewServer(fw.Handler(routes))
	t.Cleanup(srv.Close)
	return srv
}

// Frameworks is every middleware: net/http, Gin, Echo v4, Echo v5.
var Frameworks = []Framework{
	{Name: "net/http", Handler: netHTTP},
	{Name: "gin", Handler: ginHandler},
	{Name: "echo", Handler: echo4Handler},
	{Name: "echo5", Handler: echo5Handler},
}

var wildcard = regexp.MustCompile(`\{([^}]+)\}`)

// colonPath turns /orders/{id} into /orders/:id for Gin and Echo.
func colonPath(p string) string { return wildcard.ReplaceAllString(p, ":$1") }

func netHTTP(routes []Route) http.Handler {
	mux := http.NewServeMux()
	for _, rt := range routes {
		cfg := rt.Lock
		cfg.Respond = nil
		switch rt.Key.Kind {
		case Header:
			cfg.Key = httplock.FromHeader(rt.Key.Name)
		case Query:
			cfg.Key = httplock.FromQuery(rt.Key.Name)
		case Param:
			cfg.Key = httplock.FromPathValue(rt.Key.Name)
		case Idempotency:
			cfg.Key = httplock.IdempotencyKey()
		default:
			cfg.Key = httplock.FromContext(UserCtxKey{})
		}
		mux.Handle(rt.Method+" "+rt.Path, httplock.New(cfg)(rt.Handler))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				w.Header().Set(PanicHeader, "1")
				w.WriteHeader(http.StatusInternalServerError)
			}
		}()
		if u := r.Header.Get(UserHeader); u != "" {
			r = r.WithContext(context.WithValue(r.Context(), UserCtxKey{}, u))
		}
		mux.ServeHTTP(w, r)
	})
}

var ginRelease sync.Once

func ginHandler(routes []Route) http.Handler {
	ginRelease.Do(func() { gin.SetMode(gin.ReleaseMode) })
	g := gin.New()
	g.Use(gin.CustomRecoveryWithWriter(io.Discard, func(c *gin.Context, _ any) {
		c.Header(PanicHeader, "1")
		c.AbortWithStatus(http.StatusInternalServerError)
	}), func(c *gin.Context) {
		if u := c.GetHeader(UserHeader); u != "" {
			c.Set(UserKey, u)
		}
		c.Next()
	})
	for _, rt := range routes {
		var key httplock.KeyFunc
		switch rt.Key.Kind {
		case Header:
			key = httplock.FromHeader(rt.Key.Name)
		case Query:
			key = httplock.FromQuery(rt.Key.Name)
		case Param:
			key = ginlock.FromParam(rt.Key.Name)
		case Idempotency:
			key = httplock.IdempotencyKey()
		default:
			key = ginlock.FromContext(UserKey)
		}
		cfg := rt.Lock
		cfg.Key, cfg.Respond = key, nil
		g.Handle(rt.Method, colonPath(rt.Path), ginlock.New(cfg), gin.WrapH(rt.Handler))
	}
	return g
}

func echo4Handler(routes []Route) http.Handler {
	e := echo4.New()
	e.HideBanner, e.HidePort = true, true
	e.Logger.SetOutput(io.Discard)
	e.Use(func(next echo4.HandlerFunc) echo4.HandlerFunc {
		return func(c echo4.Context) (err error) {
			defer func() {
				if v := recover(); v != nil {
					c.Response().Header().Set(PanicHeader, "1")
					err = echo4.NewHTTPError(http.StatusInternalServerError)
				}
			}()
			return next(c)
		}
	}, func(next echo4.HandlerFunc) echo4.HandlerFunc {
		return func(c echo4.Context) error {
			if u := c.Request().Header.Get(UserHeader); u != "" {
				c.Set(UserKey, u)
			}
			return next(c)
		}
	})
	for _, rt := range routes {
		var key httplock.KeyFunc
		switch rt.Key.Kind {
		case Header:
			key = httplock.FromHeader(rt.Key.Name)
		case Query:
			key = httplock.FromQuery(rt.Key.Name)
		case Param:
			key = echolock.FromParam(rt.Key.Name)
		case Idempotency:
			key = httplock.IdempotencyKey()
		default:
			key = echolock.FromContext(UserKey)
		}
		cfg := rt.Lock
		cfg.Key, cfg.Respond = key, nil
		e.Add(rt.Method, colonPath(rt.Path), echo4.WrapHandler(rt.Handler), echolock.New(cfg))
	}
	return e
}

func echo5Handler(routes []Route) http.Handler {
	e := echo5.New()
	e.HTTPErrorHandler = echo5.ProblemDetailsHTTPErrorHandler(false)
	e.Use(func(next echo5.HandlerFunc) echo5.HandlerFunc {
		return func(c *echo5.Context) (err error) {
			defer func() {
				if v := recover(); v != nil {
					c.Response().Header().Set(PanicHeader, "1")
					err = echo5.NewHTTPError(http.StatusInternalServerError, "panic")
				}
			}()
			return next(c)
		}
	}, func(next echo5.HandlerFunc) echo5.HandlerFunc {
		return func(c *echo5.Context) error {
			if u := c.Request().Header.Get(UserHeader); u != "" {
				c.Set(UserKey, u)
			}
			return next(c)
		}
	})
	for _, rt := range routes {
		var key httplock.KeyFunc
		switch rt.Key.Kind {
		case Header:
			key = httplock.FromHeader(rt.Key.Name)
		case Query:
			key = httplock.FromQuery(rt.Key.Name)
		case Param:
			key = echo5lock.FromParam(rt.Key.Name)
		case Idempotency:
			key = httplock.IdempotencyKey()
		default:
			key = echo5lock.FromContext(UserKey)
		}
		cfg := rt.Lock
		cfg.Key, cfg.Respond = key, nil
		e.Add(rt.Method, colonPath(rt.Path), echo5.WrapHandler(rt.Handler), echo5lock.New(cfg))
	}
	return e
}
