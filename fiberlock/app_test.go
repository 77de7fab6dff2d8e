package fiberlock_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/gofiber/fiber/v3/middleware/adaptor"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/reqlock/reqlock/fiberlock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
)

// fiberFramework serves the shared cases' routes on a Fiber app listening on
// loopback, each route behind fiberlock.New, with recover and a stand-in
// auth in front, as an app would.
var fiberFramework = httpcases.Framework{Name: "fiber", Listen: listen}

// fiberKeys are fiberlock's.
var fiberKeys = httpcases.Extractors{
	FromContext: func(name string) httplock.KeyFunc { return fiberlock.FromLocals(name) },
	FromParam:   fiberlock.FromParam,
}

func listen(t testing.TB, tp trace.TracerProvider, routes []httpcases.Route) string {
	app := fiber.New()
	if tp != nil {
		app.Use(traced(tp))
	}
	app.Use(recovery, auth)
	for _, rt := range routes {
		cfg := rt.Lock
		cfg.Key = fiberKeys.Key(rt.Key)
		app.Add([]string{rt.Method}, httpcases.ColonPath(rt.Path), fiberlock.New(cfg), netHTTP(rt.Handler))
	}
	return serve(t, app)
}

// serve runs app on a 127.0.0.1 port until the test ends and returns its
// base URL.
func serve(t testing.TB, app *fiber.App) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- app.Listener(ln, fiber.ListenConfig{DisableStartupMessage: true}) }()
	t.Cleanup(func() {
		if err := app.ShutdownWithTimeout(10 * time.Second); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		<-done
	})
	return "http://" + ln.Addr().String()
}

// recovery stands in for Fiber's recover middleware: a panic becomes a 500
// marked with httpcases.RecoveredHeader.
func recovery(c fiber.Ctx) (err error) {
	defer func() {
		if v := recover(); v != nil {
			c.Set(httpcases.RecoveredHeader, "1")
			err = c.SendStatus(http.StatusInternalServerError)
		}
	}()
	return c.Next()
}

// auth stands in for auth and timeout middleware: the user in Locals, an
// Account beside it, and the deadline the request asks for on c.Context().
func auth(c fiber.Ctx) error {
	if u := c.Get(httpcases.UserHeader); u != "" {
		u = strings.Clone(u) // Fiber's strings point into its buffers
		c.Locals(httpcases.UserKey, u)
		c.Locals(httpcases.AccountKey, httpcases.Account{User: u})
	}
	if d, err := time.ParseDuration(c.Get(httpcases.DeadlineHeader)); err == nil {
		ctx, cancel := context.WithTimeout(c.Context(), d)
		defer cancel()
		c.SetContext(ctx)
	}
	return c.Next()
}

// traced stands in for OpenTelemetry instrumentation: a server span per
// request, on c.Context().
func traced(tp trace.TracerProvider) fiber.Handler {
	tracer := tp.Tracer("fiber-test")
	return func(c fiber.Ctx) error {
		ctx, span := tracer.Start(c.Context(), c.Method(), trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		c.SetContext(ctx)
		return c.Next()
	}
}

// netHTTP runs a case's net/http handler as a Fiber handler, on the same
// goroutine (so that a panic reaches the recovery) and with c.Context() as
// the request's context (which carries the lock). Only the tests convert:
// the middleware never does.
func netHTTP(h http.Handler) fiber.Handler {
	return func(c fiber.Ctx) error {
		r, err := adaptor.ConvertRequest(c, true)
		if err != nil {
			return err
		}
		for _, vs := range r.Header { // fasthttp's strings point into its buffers
			for i, v := range vs {
				vs[i] = strings.Clone(v)
			}
		}
		w := &bridge{resp: c.Response(), header: http.Header{}}
		h.ServeHTTP(w, r.WithContext(c.Context()))
		w.finish()
		return nil
	}
}

// bridge is the http.ResponseWriter of netHTTP's handlers. A flushed
// response becomes a streamed body, as a Fiber handler streams.
type bridge struct {
	resp     *fasthttp.Response
	header   http.Header
	status   int
	body     bytes.Buffer
	streamed bool
}

func (w *bridge) Header() http.Header { return w.header }

func (w *bridge) WriteHeader(code int) {
	if w.status != 0 {
		return
	}
	w.status = code
	for name, vs := range w.header {
		w.resp.Header.Del(name)
		for _, v := range vs {
			w.resp.Header.Add(name, v)
		}
	}
	w.resp.SetStatusCode(code)
}

func (w *bridge) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

func (w *bridge) Flush() {
	w.WriteHeader(http.StatusOK)
	w.streamed = true
}

func (w *bridge) finish() {
	w.WriteHeader(http.StatusOK)
	if w.streamed {
		w.resp.SetBodyStream(bytes.NewReader(w.body.Bytes()), w.body.Len())
		return
	}
	w.resp.SetBody(w.body.Bytes())
}
