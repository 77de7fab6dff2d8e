package frameworks

import (
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v5"
	"github.com/labstack/echo/v5/middleware"
	"go.opentelemetry.io/otel/trace"

	"github.com/reqlock/reqlock/echo5lock"
	"github.com/reqlock/reqlock/internal/httpcases"
)

// Echo5 serves the routes on an Echo v5 with recovery and a stand-in auth
// middleware in front, and Echo's RFC 9457 error handler, as the README
// sets it.
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
	e.HTTPErrorHandler = echo.ProblemDetailsHTTPErrorHandler(false) // as the README says
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{DisablePrintStack: true}), Echo5Auth)
	for _, rt := range routes {
		e.Add(rt.Method, httpcases.ColonPath(rt.Path), echo.WrapHandler(rt.Handler), echo5lock.New(lockConfig(rt, echo5Keys)))
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

// echo5Keys are echo5lock's.
var echo5Keys = httpcases.Extractors{FromContext: echo5lock.FromContext, FromParam: echo5lock.FromParam}
