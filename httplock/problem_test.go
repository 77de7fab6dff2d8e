package httplock_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

// rejection returns what the engine answers a duplicate with.
func rejection(t *testing.T) *httplock.Rejection {
	t.Helper()
	l := core.NewLocker(memorystore.New())
	e, _ := httplock.NewEngine(httplock.Config{Locker: l})
	lk, err := l.TryObtain(context.Background(), httplock.LockKey("s", "k"))
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release(context.Background())
	rej := e.Serve(context.Background(), "s", "k", nil, func(context.Context) { t.Fatal("handler ran") })
	if rej == nil {
		t.Fatal("no rejection")
	}
	return rej
}

func TestWriteProblem(t *testing.T) {
	rej := rejection(t)
	if !errors.Is(rej, httplock.ErrLocked) || !errors.Is(rej, core.ErrNotObtained) {
		t.Fatalf("rejection %v does not unwrap to ErrLocked and core.ErrNotObtained", rej)
	}
	w := httptest.NewRecorder()
	httplock.WriteProblem(w, httptest.NewRequest("POST", "/", nil), rej)
	if w.Code != http.StatusConflict || w.Header().Get("Retry-After") != "1" ||
		w.Header().Get("Content-Type") != httplock.ContentTypeProblem || w.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("got %d %v", w.Code, w.Header())
	}
	var p map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	if p["type"] != "about:blank" || p["title"] != "Conflict" || p["status"] != float64(409) || p["code"] != "locked" || p["detail"] == "" {
		t.Fatalf("body %s", w.Body)
	}

	w = httptest.NewRecorder()
	httplock.WriteProblem(w, httptest.NewRequest("HEAD", "/", nil), rej)
	if w.Code != http.StatusConflict || w.Body.Len() != 0 {
		t.Fatalf("HEAD: %d with %d bytes", w.Code, w.Body.Len())
	}
}

func TestRespondReplacesResponse(t *testing.T) {
	l := core.NewLocker(memorystore.New())
	mw := httplock.New(httplock.Config{
		Locker: l, Key: httplock.FromHeader("X-Key"), KeyRequired: true, Scope: "orders",
		Respond: func(w http.ResponseWriter, r *http.Request, rej *httplock.Rejection) {
			if errors.Is(rej, httplock.ErrKeyMissing) {
				http.Error(w, "send X-Key", http.StatusPreconditionRequired)
				return
			}
			httplock.WriteProblem(w, r, rej)
		},
	})
	w := httptest.NewRecorder()
	mw(http.NotFoundHandler()).ServeHTTP(w, httptest.NewRequest("POST", "/", nil))
	if w.Code != http.StatusPreconditionRequired {
		t.Fatalf("got %d, want the replaced 428", w.Code)
	}
}

func TestPanicReleasesAndPropagates(t *testing.T) {
	l := core.NewLocker(memorystore.New())
	e, _ := httplock.NewEngine(httplock.Config{Locker: l})
	func() {
		defer func() {
			if v := recover(); v != "boom" {
				t.Fatalf("recovered %v, want the handler's panic", v)
			}
		}()
		e.Serve(context.Background(), "s", "k", nil, func(context.Context) { panic("boom") })
	}()
	lk, err := l.TryObtain(context.Background(), httplock.LockKey("s", "k"))
	if err != nil {
		t.Fatalf("lock left behind after a panic: %v", err)
	}
	_ = lk.Release(context.Background())
}

func TestClientGoneWritesNothing(t *testing.T) {
	l := core.NewLocker(memorystore.New())
	e, _ := httplock.NewEngine(httplock.Config{Locker: l})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rej := e.Serve(ctx, "s", "k", nil, func(context.Context) { t.Fatal("handler ran for a client that left") })
	if !errors.Is(rej, httplock.ErrClientGone) || rej.Status != httplock.StatusClientClosedRequest {
		t.Fatalf("got %v", rej)
	}
	w := httptest.NewRecorder()
	httplock.WriteProblem(w, httptest.NewRequest("POST", "/", nil), rej)
	if w.Body.Len() != 0 || len(w.Header()) != 0 {
		t.Fatalf("wrote %d %v for a client that left", w.Code, w.Header())
	}
}
