package frameworks

import (
	"io"
	"net/http"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/contrib/instrumentation/github.com/labstack/echo/otelecho"
	"go.opentelemetry.io/otel/trace"

	"github.com/reqlock/reqlock/echolock"
	"github.com/reqlock/reqlock/internal/httpcases"
)

// Echo serves the routes on an Echo v4 with recovery and a stand-in auth
// middleware in front, and Echo's default error handler; traced, under
// otelecho.
var Echo = httpcases.Framework{Name: "echo", Handler: echoHandler}

// echoKeys are echolock's.
var echoKeys = httpcases.Extractors{FromContext: echolock.FromContext, FromParam: echolock.FromParam}

func echoHandler(tp trace.TracerProvider, routes []httpcases.Route) http.Handler {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Logger.SetOutput(io.Discard)
	if tp != nil {
		e.Use(otelecho.Middleware("server", otelecho.WithTracerProvider(tp)))
	}
	e.Use(echoRecover, EchoAuth)
	for _, rt := range routes {
		e.Add(rt.Method, httpcases.ColonPath(rt.Path), echo.WrapHandler(rt.Handler), echolock.New(lockConfig(rt, echoKeys)))
	}
	return e
}

// echoRecover stands in for recovery middleware on Echo v4.
func echoRecover(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				c.Response().Header().Set(httpcases.RecoveredHeader, "1")
				err = echo.NewHTTPError(http.StatusInternalServerError)
			}
		}()
		return next(c)
	}
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
