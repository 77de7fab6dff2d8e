package frameworks

import (
	"net/http"

	"github.com/labstack/echo/v5"
	"go.opentelemetry.io/otel/trace"

	"github.com/reqlock/reqlock/echo5lock"
	"github.com/reqlock/reqlock/internal/httpcases"
)

// Echo5 serves the routes on an Echo v5 with recovery and a stand-in auth
// middleware in front, and Echo's RFC 9457 error handler, as the README
// sets it; traced, under a stand-in for instrumentation.
var Echo5 = httpcases.Framework{Name: "echo5", Handler: echo5Handler}

// echo5Keys are echo5lock's.
var echo5Keys = httpcases.Extractors{FromContext: echo5lock.FromContext, FromParam: echo5lock.FromParam}

func echo5Handler(tp trace.TracerProvider, routes []httpcases.Route) http.Handler {
	e := echo.New()
	if tp != nil {
		e.Use(serverSpan(tp))
	}
	e.HTTPErrorHandler = echo.ProblemDetailsHTTPErrorHandler(false) // as the README says
	e.Use(echo5Recover, Echo5Auth)
	for _, rt := range routes {
		e.Add(rt.Method, httpcases.ColonPath(rt.Path), echo.WrapHandler(rt.Handler), echo5lock.New(lockConfig(rt, echo5Keys)))
	}
	return e
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

// echo5Recover stands in for recovery middleware on Echo v5.
func echo5Recover(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) (err error) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				c.Response().Header().Set(httpcases.RecoveredHeader, "1")
				err = echo.NewHTTPError(http.StatusInternalServerError, "panic")
			}
		}()
		return next(c)
	}
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
