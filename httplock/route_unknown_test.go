package httplock_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/memorystore"
)

// Wrapped around a whole ServeMux, the middleware runs before routing and
// cannot tell one route from another: every request gets 500 route_unknown
// rather than one lock for every POST. Per route, it locks per route.
func TestRouteUnknownAroundWholeMux(t *testing.T) {
	l := core.NewLocker(memorystore.New())
	lock := httplock.New(httplock.Config{Locker: l, Key: httplock.FromHeader("X-User"), Logger: httpcases.Quiet})
	ran := 0
	mux := http.NewServeMux()
	mux.HandleFunc("POST /profile", func(http.ResponseWriter, *http.Request) { ran++ })
	w := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/profile", nil)
	req.Header.Set("X-User", "ann")
	lock(mux).ServeHTTP(w, req)
	if w.Code != http.StatusInternalServerError || ran != 0 {
		t.Fatalf("around the mux: %d, handler ran %d times; want 500 and none", w.Code, ran)
	}
	if !strings.Contains(w.Body.String(), `"code":"route_unknown"`) {
		t.Fatalf("body %s has no route_unknown code", w.Body)
	}

	e, _ := httplock.NewEngine(httplock.Config{Locker: l})
	if rej := e.Serve(context.Background(), e.Scope("POST", ""), "ann", nil, func(context.Context) { ran++ }); !errors.Is(rej, httplock.ErrRouteUnknown) || ran != 0 {
		t.Fatalf("Serve with no route and no Scope: %v", rej)
	}
	e, _ = httplock.NewEngine(httplock.Config{Locker: l, Scope: "profile"})
	if rej := e.Serve(context.Background(), e.Scope("POST", ""), "ann", nil, func(context.Context) { ran++ }); rej != nil || ran != 1 {
		t.Fatalf("Serve with Config.Scope: %v, ran %d", rej, ran)
	}
}
