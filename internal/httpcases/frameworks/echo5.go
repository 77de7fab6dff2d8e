package frameworks

import (
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v5"
	"github.com/labstack/echo/v5/middleware"
	"go.opentelemetry.io/otel/trace"

	"github.com/reqlock/reqlock/echo5lock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
)

// Echo5 serves the routes on an Echo v5 with recovery and a stand-in auth
// middleware in front, and an app error handler that renders rejections as
// problem+json via RenderProblem.
var Echo5 = httpcases.Framework{
	Name: "echo5",
	Serve: func(t *testing.T, routes []httpcases.Route) string {
		srv := httptest.NewServer(newEcho5(routes))
		t.Cleanup(srv.Close)
		return srv.URL
	},
	ServeTraced: func(t *testing.T, tp trace.TracerProvider, routes []httpcases.Route) string {
		srv := httptest.NewServer(newEcho5(routes, serverSpan(tp)))
		t.Cleanup(srv.Close)
		return srv.URL
	},
}

// serverSpan stands in for OpenTelemetry instrumentation of Echo v5: a
// server span around each request, on the request's context.
func serverSpan(tp trace.TracerProvider) echo.MiddlewareFunc {
	tracer := tp.Tracer("echo5lock_test")
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c *echo.Context) error {
			req := c.Request()
			ctx, span := tracer.Start(req.Context(), req.Method+" "+c.Path(), trace.WithSpanKind(trace.SpanKindServer))
			defer span.End()
			c.SetRequest(req.WithContext(ctx))
			return next(c)
		}
	}
}

// newEcho5 serves routes, with outer middleware (instrumentation) first.
func newEcho5(routes []httpcases.Route, outer ...echo.MiddlewareFunc) *echo.Echo {
	e := echo.New()
	e.Use(outer...)
	e.HTTPErrorHandler = func(c *echo.Context, err error) {
		if echo5lock.RenderProblem(c, err) {
			return
		}
		echo.DefaultHTTPErrorHandler(false)(c, err)
	}
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{DisablePrintStack: true}), Echo5Auth)
	for _, rt := range routes {
		// The case's whole httplock.Config goes in as is: the embedded
		// Config is how every engine option reaches this adapter.
		cfg := echo5lock.Config{Key: echo5Key(rt.Key), Config: rt.Lock}
		e.Add(rt.Method, httpcases.ColonPath(rt.Path), echo.WrapHandler(rt.Handler), echo5lock.WithConfig(cfg))
	}
	return e
}

// Echo5Auth stands in for auth and timeout middleware on Echo v5.
func Echo5Auth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		if u := c.Request().Header.Get(httpcases.UserHeader); u != "" {
			c.Set(httpcases.UserKey, u)
			c.Set(httpcases.AccountKey, httpcases.Account{User: u})
		}
		r, cancel := httpcases.WithDeadline(c.Request())
		defer cancel()
		c.SetRequest(r)
		return next(c)
	}
}

func echo5Key(k httpcases.KeySource) echo5lock.KeyFunc {
	switch k.Kind {
	case httpcases.FromHeader:
		return echo5lock.FromHeader(k.Name)
	case httpcases.FromParam:
		return echo5lock.FromParam(k.Name)
	case httpcases.FromQuery:
		return echo5lock.FromQuery(k.Name)
	case httpcases.FromIdempotencyKey:
		return echo5lock.IdempotencyKey()
	case httpcases.FromValue:
		return echo5lock.FromContext(k.Name)
	case httpcases.FromUserAndIdempotencyKey:
		return httplock.Join(echo5lock.FromContext(httpcases.UserKey), echo5lock.IdempotencyKey())
	}
	return echo5lock.FromContext(httpcases.UserKey)
}
