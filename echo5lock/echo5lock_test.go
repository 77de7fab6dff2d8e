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

// With Echo's default error handler the rejection is an *echo.HTTPError:
// its status and detail, Retry-After, and the Rejection for errors.As.
func TestDefaultErrorHandlerReachesAppHandler(t *testing.T) {
	l := lockedOut(t, "POST /orders/:id", "42")
	e := echo.New()
	var seen error
	e.HTTPErrorHandler = func(c *echo.Context, err error) {
		seen = err
		echo.DefaultHTTPErrorHandler(false)(c, err)
	}
	e.POST("/orders/:id", mustNotRun(t), echo5lock.New(l, echo5lock.FromParam("id")))

	w := request(e, "POST", "/orders/42")
	if w.Code != http.StatusConflict || w.Header().Get("Retry-After") != "1" || w.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("got %d %v", w.Code, w.Header())
	}
	var body struct{ Message string }
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Message == "" {
		t.Fatalf("body %s (%v)", w.Body, err)
	}
	var he *echo.HTTPError
	var rej *httplock.Rejection
	if !errors.As(seen, &he) || he.Code != http.StatusConflict || !errors.As(seen, &rej) || !errors.Is(rej, httplock.ErrLocked) {
		t.Fatalf("app error handler saw %#v", seen)
	}
}

// Echo's own RFC 9457 handler renders a rejection as a problem.
func TestProblemDetailsHTTPErrorHandler(t *testing.T) {
	l := lockedOut(t, "orders", "alice")
	e := echo.New()
	e.HTTPErrorHandler = echo.ProblemDetailsHTTPErrorHandler(false)
	e.POST("/orders", mustNotRun(t), echo5lock.WithConfig(echo5lock.Config{
		Key: echo5lock.FromHeader("X-User"), Config: httplock.Config{Locker: l, Scope: "orders"},
	}))
	w := request(e, "POST", "/orders", "X-User", "alice")
	if w.Code != http.StatusConflict || w.Header().Get("Retry-After") != "1" || w.Header().Get("Content-Type") != echo.MIMEApplicationProblemJSON {
		t.Fatalf("got %d %v", w.Code, w.Header())
	}
	var p httplock.Problem
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || p.Status != http.StatusConflict || p.Type != "about:blank" || p.Detail == "" {
		t.Fatalf("body %s (%v)", w.Body, err)
	}
}

// RenderProblem writes reqlock's own problem, "code" included, and leaves
// other errors to the next handler.
func TestRenderProblem(t *testing.T) {
	l := lockedOut(t, "orders", "alice")
	e := echo.New()
	e.HTTPErrorHandler = func(c *echo.Context, err error) {
		if !echo5lock.RenderProblem(c, err) {
			echo.DefaultHTTPErrorHandler(false)(c, err)
		}
	}
	e.POST("/orders", func(*echo.Context) error { return echo.ErrForbidden }, echo5lock.WithConfig(echo5lock.Config{
		Key: echo5lock.FromHeader("X-User"), Config: httplock.Config{Locker: l, Scope: "orders"},
	}))
	w := request(e, "POST", "/orders", "X-User", "alice")
	var p httplock.Problem
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || p.Code != "locked" || w.Header().Get("Content-Type") != httplock.ContentTypeProblem {
		t.Fatalf("got %d %v %s", w.Code, w.Header(), w.Body)
	}
	if w := request(e, "POST", "/orders", "X-User", "bob"); w.Code != http.StatusForbidden {
		t.Fatalf("handler's own error: %d", w.Code)
	}
}

func TestWriteProblemErrorHandler(t *testing.T) {
	l := lockedOut(t, "orders", "alice")
	e := echo.New()
	e.HTTPErrorHandler = func(c *echo.Context, err error) { t.Errorf("error handler got %v", err) }
	e.POST("/orders", mustNotRun(t), echo5lock.WithConfig(echo5lock.Config{
		Key: echo5lock.FromHeader("X-User"), ErrorHandler: echo5lock.WriteProblem,
		Config: httplock.Config{Locker: l, Scope: "orders"},
	}))
	w := request(e, "POST", "/orders", "X-User", "alice")
	if w.Code != http.StatusConflict || w.Header().Get("Content-Type") != httplock.ContentTypeProblem {
		t.Fatalf("got %d %v", w.Code, w.Header())
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
		Key:        echo5lock.FromHeader("X-User"),
		Config:     httplock.Config{Locker: l, Scope: "orders"},
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
	}, echo5lock.New(l, echo5lock.FromHeader("X-User")))
	if w := request(e, "POST", "/orders", "X-User", "alice"); w.Code != http.StatusOK {
		t.Fatalf("got %d", w.Code)
	}
}

func TestHandlerErrorPassesThrough(t *testing.T) {
	l := core.NewLocker(memorystore.New())
	e := echo.New()
	e.POST("/orders", func(*echo.Context) error {
		return echo.NewHTTPError(http.StatusTeapot, "no")
	}, echo5lock.New(l, echo5lock.FromHeader("X-User")))
	for i := range 2 { // the second finds the key free again
		if w := request(e, "POST", "/orders", "X-User", "alice"); w.Code != http.StatusTeapot {
			t.Fatalf("request %d: got %d", i, w.Code)
		}
	}
}

func TestInvalidConfig(t *testing.T) {
	l := core.NewLocker(memorystore.New())
	key := echo5lock.FromParam("id")
	for name, cfg := range map[string]echo5lock.Config{
		"nil key":        {Config: httplock.Config{Locker: l}},
		"nil locker":     {Key: key},
		"bad mode":       {Key: key, Config: httplock.Config{Locker: l, Mode: 5}},
		"net/http key":   {Key: key, Config: httplock.Config{Locker: l, Key: httplock.FromHeader("X")}},
		"net/http reply": {Key: key, Config: httplock.Config{Locker: l, Respond: httplock.WriteProblem}},
	} {
		if mw, err := cfg.ToMiddleware(); mw != nil || !errors.Is(err, httplock.ErrInvalidConfig) {
			t.Errorf("%s: ToMiddleware = %v", name, err)
		}
		func() {
			defer func() {
				if err, _ := recover().(error); !errors.Is(err, httplock.ErrInvalidConfig) {
					t.Errorf("%s: WithConfig recovered %v", name, err)
				}
			}()
			echo5lock.WithConfig(cfg)
		}()
	}
}
