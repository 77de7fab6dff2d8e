package frameworks

import (
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"go.opentelemetry.io/contrib/instrumentation/github.com/labstack/echo/otelecho"
	"go.opentelemetry.io/otel/trace"

	"github.com/reqlock/reqlock/echolock"
	"github.com/reqlock/reqlock/internal/httpcases"
)

// Echo serves the routes on an Echo v4 with recovery and a stand-in auth
// middleware in front, and Echo's default error handler.
var Echo = httpcases.Framework{
	Name: "echo",
	Serve: func(t *testing.T, routes []httpcases.Route) string {
		srv := httptest.NewServer(newEcho(routes))
		t.Cleanup(srv.Close)
		return srv.URL
	},
	ServeTraced: func(t *testing.T, tp trace.TracerProvider, routes []httpcases.Route) string {
		srv := httptest.NewServer(newEcho(routes, otelecho.Middleware("server", otelecho.WithTracerProvider(tp))))
		t.Cleanup(srv.Close)
		return srv.URL
	},
}

// newEcho serves routes, with outer middleware (instrumentation) first.
func newEcho(routes []httpcases.Route, outer ...echo.MiddlewareFunc) *echo.Echo {
	e := echo.New()
	e.Use(outer...)
	e.HideBanner, e.HidePort = true, true
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{DisablePrintStack: true, DisableErrorHandler: false}), EchoAuth)
	for _, rt := range routes {
		e.Add(rt.Method, httpcases.ColonPath(rt.Path), echo.WrapHandler(rt.Handler), echolock.New(lockConfig(rt, echoKeys)))
	}
	return e
}

// EchoAuth stands in for auth and timeout middleware on Echo v4.
func EchoAuth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
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

// echoKeys are echolock's.
var echoKeys = httpcases.Extractors{FromContext: echolock.FromContext, FromParam: echolock.FromParam}
