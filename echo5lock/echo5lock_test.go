package echo5lock_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v5"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/echo5lock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

var _ echo.MiddlewareConfigurator = echo5lock.Config{}

// request serves one request on e; hdr is name, value, name, value….
func request(e *echo.Echo, method, target string, hdr ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	e.ServeHTTP(w, r)
	return w
}

// lockedOut returns a Locker on which key is held in scope for the test.
func lockedOut(t *testing.T, scope, key string) *core.Locker {
	t.Helper()
	l := core.NewLocker(memorystore.New())
	lk, err := l.TryObtain(context.Background(), httplock.LockKey(scope, key))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lk.Release(context.Background()) })
	return l
}

func mustNotRun(t *testing.T) echo.HandlerFunc {
	return func(*echo.Context) error {
		t.Error("handler ran while the key was held")
		return nil
	}
}

// The middleware answers a rejection as a problem, "code" included, and
// returns it as an *echo.HTTPError (its status, and the Rejection for
// errors.As) that Echo's default error handler leaves alone.
func TestDefaultErrorHandlerReachesAppHandler(t *testing.T) {
	l := lockedOut(t, "POST /orders/:id", "42")
	e := echo.New()
	var seen error
	e.HTTPErrorHandler = func(c *echo.Context, err error) {
		seen = err
		echo.DefaultHTTPErrorHandler(false)(c, err)
	}
	e.POST("/orders/:id", mustNotRun(t), echo5lock.New(httplock.Config{Locker: l, Key: echo5lock.FromParam("id")}))

	w := request(e, "POST", "/orders/42")
	if w.Code != http.StatusConflict || w.Header().Get("Retry-After") != "1" || w.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("got %d %v", w.Code, w.Header())
	}
	var p httplock.Problem
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || p.Code != "locked" {
		t.Fatalf("body %s (%v)", w.Body, err)
	}
	var he *echo.HTTPError
	var rej *httplock.Rejection
	if !errors.As(seen, &he) || he.Code != http.StatusConflict || !errors.As(seen, &rej) || !errors.Is(rej, httplock.ErrLocked) {
		t.Fatalf("app error handler saw %#v", seen)
	}
}

// Under Echo's own RFC 9457 handler, as the README sets it, the problem
// keeps reqlock's "code": Echo's problem has no member for it, so the
// middleware writes the answer and the handler leaves it alone.
func TestProblemDetailsHTTPErrorHandler(t *testing.T) {
	l := lockedOut(t, "orders", "alice")
	e := echo.New()
	e.HTTPErrorHandler = echo.ProblemDetailsHTTPErrorHandler(false)
	e.POST("/orders", mustNotRun(t), echo5lock.New(httplock.Config{
		Key: httplock.FromHeader("X-User"), Locker: l, Scope: "orders",
	}))
	w := request(e, "POST", "/orders", "X-User", "alice")
	if w.Code != http.StatusConflict || w.Header().Get("Retry-After") != "1" || w.Header().Get("Content-Type") != echo.MIMEApplicationProblemJSON {
		t.Fatalf("got %d %v", w.Code, w.Header())
	}
	var p httplock.Problem
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || p.Status != http.StatusConflict || p.Type != "about:blank" || p.Detail == "" || p.Code != "locked" {
		t.Fatalf("body %s (%v)", w.Body, err)
	}
}

// A handler's own error still goes to the app's error handler.
func TestHandlerErrorReachesProblemDetails(t *testing.T) {
	l := core.NewLocker(memorystore.New())
	e := echo.New()
	e.HTTPErrorHandler = echo.ProblemDetailsHTTPErrorHandler(false)
	e.POST("/orders", func(*echo.Context) error { return echo.ErrForbidden }, echo5lock.New(httplock.Config{
		Key: httplock.FromHeader("X-User"), Locker: l, Scope: "orders",
	}))
	if w := request(e, "POST", "/orders", "X-User", "bob"); w.Code != http.StatusForbidden || w.Header().Get("Content-Type") != echo.MIMEApplicationProblemJSON {
		t.Fatalf("handler's own error: %d %v", w.Code, w.Header())
	}
}

func TestSkipperBeforeFuncAndLockFrom(t *testing.T) {
	l := lockedOut(t, "orders", "alice")
	var before int
	e := echo.New()
	e.POST("/orders", func(c *echo.Context) error {
		lk, ok := echo5lock.LockFrom(c)
		switch skipped := c.Request().Header.Get("X-Skip") != ""; {
		case skipped && !ok:
			return c.NoContent(http.StatusNoContent)
		case !skipped && ok && lk.Key() == httplock.LockKey("orders", "bob"):
			return c.NoContent(http.StatusOK)
		}
		return c.NoContent(http.StatusInternalServerError)
	}, echo5lock.WithConfig(echo5lock.Config{
		Skipper:    func(c *echo.Context) bool { return c.Request().Header.Get("X-Skip") != "" },
		BeforeFunc: func(*echo.Context) { before++ },
		Lock:       httplock.Config{Key: httplock.FromHeader("X-User"), Locker: l, Scope: "orders"},
	}))
	if w := request(e, "POST", "/orders", "X-User", "alice", "X-Skip", "1"); w.Code != http.StatusNoContent {
		t.Fatalf("skipped request: %d", w.Code)
	}
	if w := request(e, "POST", "/orders", "X-User", "bob"); w.Code != http.StatusOK {
		t.Fatalf("locked request: %d", w.Code)
	}
	if before != 1 {
		t.Fatalf("BeforeFunc ran %d times, want 1 (not for skipped requests)", before)
	}
}

// Middleware outside the lock gets its own request back, not one whose
// context ended with the lock.
func TestRequestRestoredAfterHandler(t *testing.T) {
	l := core.NewLocker(memorystore.New())
	e := echo.New()
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c *echo.Context) error {
			req := c.Request()
			err := next(c)
			if c.Request() != req || c.Request().Context().Err() != nil {
				t.Error("request not restored after the handler")
			}
			return err
		}
	})
	e.POST("/orders", func(c *echo.Context) error {
		if _, ok := echo5lock.LockFrom(c); !ok {
			t.Error("no lock on the handler's request")
		}
		return c.NoContent(http.StatusOK)
	}, echo5lock.New(httplock.Config{Locker: l, Key: httplock.FromHeader("X-User")}))
	if w := request(e, "POST", "/orders", "X-User", "alice"); w.Code != http.StatusOK {
		t.Fatalf("got %d", w.Code)
	}
}

func TestHandlerErrorPassesThrough(t *testing.T) {
	l := core.NewLocker(memorystore.New())
	e := echo.New()
	e.POST("/orders", func(*echo.Context) error {
		return echo.NewHTTPError(http.StatusTeapot, "no")
	}, echo5lock.New(httplock.Config{Locker: l, Key: httplock.FromHeader("X-User")}))
	for i := range 2 { // the second finds the key free again
		if w := request(e, "POST", "/orders", "X-User", "alice"); w.Code != http.StatusTeapot {
			t.Fatalf("request %d: got %d", i, w.Code)
		}
	}
}
