package frameworks_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/memorystore"
)

// With chi's usual router-wide r.Use the middleware runs before routing,
// where r.Pattern is still empty. Routes of one method must never share a
// lock silently (one user's POST /profile answering 409 while their POST
// /orders/1 runs): every request gets 500 route_unknown, logged as an error
// that says what to set. With Config.Scope set, or the middleware in
// r.With, each route locks on its own.
func TestChiRouterWideUse(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	lg := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	l := core.NewLocker(memorystore.New())
	key := httplock.FromContext(httpcases.ValueKey(httpcases.UserKey))
	ran := 0
	ok := func(w http.ResponseWriter, r *http.Request) { ran++ }

	r := chi.NewRouter()
	r.Use(httpcases.WithUser, httplock.New(httplock.Config{Locker: l, Key: key, Logger: lg}))
	r.Post("/profile", ok)
	r.Post("/orders/{id}", ok)
	for _, path := range []string{"/profile", "/orders/1"} {
		w := post(r, path, "ann")
		var p httplock.Problem
		if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || w.Code != http.StatusInternalServerError || p.Code != "route_unknown" {
			t.Errorf("POST %s under router-wide Use: %d %s, want 500 route_unknown", path, w.Code, w.Body)
		}
	}
	mu.Lock()
	logged := logs.String()
	mu.Unlock()
	if ran != 0 || !strings.Contains(logged, "level=ERROR") || !strings.Contains(logged, "r.With(lock)") || !strings.Contains(logged, "Config.Scope") {
		t.Errorf("handlers ran %d times; the error log does not say what to set:\n%s", ran, logged)
	}

	// Per route, with r.With: POST /profile runs while the same user's
	// POST /orders/1 holds its own lock.
	r = chi.NewRouter()
	r.Use(httpcases.WithUser)
	lock := httplock.New(httplock.Config{Locker: l, Key: key})
	r.With(lock).Post("/profile", ok)
	r.With(lock).Post("/orders/{id}", ok)
	held, err := l.TryObtain(t.Context(), httplock.LockKey("POST /orders/{id}", "ann"))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(t.Context())
	if w := post(r, "/orders/1", "ann"); w.Code != http.StatusConflict {
		t.Errorf("POST /orders/1 while held: %d, want 409", w.Code)
	}
	if w := post(r, "/profile", "ann"); w.Code != http.StatusOK {
		t.Errorf("POST /profile while /orders/1 is held: %d, want 200", w.Code)
	}
}

func post(h http.Handler, path, user string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", path, nil)
	req.Header.Set(httpcases.UserHeader, user)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
