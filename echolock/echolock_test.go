package echolock_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/echolock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

func serve(h http.Handler, method, url string, hdr ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func held(t *testing.T, l *core.Locker, scope, key string) {
	t.Helper()
	lk, err := l.TryObtain(context.Background(), httplock.LockKey(scope, key))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lk.Release(context.Background()) })
}

// A rejection is answered as problem+json, with Retry-After, and the error
// the middleware returns reaches the app's error handler, which leaves the
// committed answer alone and can reach the Rejection.
func TestDefaultErrorHandlerReachesAppHandler(t *testing.T) {
	l := core.NewLocker(memorystore.New())
	held(t, l, "POST /orders/:id", "42")
	e := echo.New()
	var seen *httplock.Rejection
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		errors.As(err, &seen)
		e.DefaultHTTPErrorHandler(err, c)
	}
	e.POST("/orders/:id", func(c echo.Context) error {
		t.Error("handler ran while the key was held")
		return nil
	}, echolock.New(httplock.Config{Locker: l, Key: echolock.FromParam("id")}))

	w := serve(e, "POST", "/orders/42")
	if w.Code != http.StatusConflict || w.Header().Get("Retry-After") != "1" || w.Header().Get("Content-Type") != httplock.ContentTypeProblem {
		t.Fatalf("got %d %v", w.Code, w.Header())
	}
	var p httplock.Problem
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || p.Code != "locked" || p.Status != http.StatusConflict {
		t.Fatalf("body %s (%v)", w.Body, err)
	}
	if seen == nil || !errors.Is(seen, httplock.ErrLocked) {
		t.Fatalf("app error handler saw %v", seen)
	}
}

// A Respond of one's own answers the rejection, finding Echo's context.
func TestRespondAnswers(t *testing.T) {
	l := core.NewLocker(memorystore.New())
	held(t, l, "orders", "alice")
	e := echo.New()
	e.POST("/orders", func(c echo.Context) error { return nil }, echolock.New(httplock.Config{
		Locker: l, Key: httplock.FromHeader("X-User"), Scope: "orders",
		Respond: func(_ http.ResponseWriter, r *http.Request, rej *httplock.Rejection) {
			c, _ := echolock.ContextOf(r)
			_ = c.String(http.StatusLocked, rej.Problem.Code)
		},
	}))
	w := serve(e, "POST", "/orders", "X-User", "alice")
	if w.Code != http.StatusLocked || w.Body.String() != "locked" {
		t.Fatalf("got %d %q", w.Code, w.Body)
	}
}

func TestSkipperBeforeFuncAndLockFrom(t *testing.T) {
	l := core.NewLocker(memorystore.New())
	held(t, l, "orders", "alice")
	var before int
	e := echo.New()
	e.POST("/orders", func(c echo.Context) error {
		lk, ok := echolock.LockFrom(c)
		if c.Request().Header.Get("X-Skip") != "" {
			if ok {
				return c.NoContent(http.StatusInternalServerError)
			}
			return c.NoContent(http.StatusNoContent)
		}
		if ctxLock, _ := core.FromContext(c.Request().Context()); !ok || lk != ctxLock {
			return c.NoContent(http.StatusInternalServerError)
		}
		return c.NoContent(http.StatusOK)
	}, echolock.WithConfig(echolock.Config{
		Skipper:    func(c echo.Context) bool { return c.Request().Header.Get("X-Skip") != "" },
		BeforeFunc: func(echo.Context) { before++ },
		Lock:       httplock.Config{Locker: l, Key: httplock.FromHeader("X-User"), Scope: "orders"},
	}))
	if w := serve(e, "POST", "/orders", "X-User", "alice", "X-Skip", "1"); w.Code != http.StatusNoContent {
		t.Fatalf("skipped request: %d", w.Code)
	}
	if w := serve(e, "POST", "/orders", "X-User", "bob"); w.Code != http.StatusOK {
		t.Fatalf("locked request: %d", w.Code)
	}
	if before != 1 {
		t.Fatalf("BeforeFunc ran %d times, want 1 (not for skipped requests)", before)
	}
}

func TestHandlerErrorPassesThrough(t *testing.T) {
	l := core.NewLocker(memorystore.New())
	e := echo.New()
	e.POST("/orders", func(c echo.Context) error {
		return echo.NewHTTPError(http.StatusTeapot, "no")
	}, echolock.New(httplock.Config{Locker: l, Key: httplock.FromHeader("X-User")}))
	if w := serve(e, "POST", "/orders", "X-User", "alice"); w.Code != http.StatusTeapot {
		t.Fatalf("got %d", w.Code)
	}
	if w := serve(e, "POST", "/orders", "X-User", "alice"); w.Code != http.StatusTeapot {
		t.Fatalf("second request: got %d; lock not released after an error?", w.Code)
	}
}
