package httplock_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

type userCtxKey struct{}
type structUser struct{ ID int }

// Two routes whose key extractor finds a value of a type no key can be
// made of both answer 500 key_misconfigured, and each is logged: the burst
// limit is per scope, so fixing /a does not leave /b broken without a
// trace.
func TestEachMisconfiguredRouteIsLogged(t *testing.T) {
	var buf syncBuf
	lg := slog.New(slog.NewTextHandler(&buf, nil))
	lk := core.NewLocker(memorystore.New())
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	mux := http.NewServeMux()
	for _, p := range []string{"/a", "/b"} {
		mw := httplock.New(httplock.Config{Locker: lk, Key: httplock.FromContext(userCtxKey{}), Logger: lg})
		mux.Handle("POST "+p, mw(ok))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userCtxKey{}, structUser{7})))
	}))
	defer srv.Close()
	for _, p := range []string{"/a", "/b"} {
		resp, err := http.Post(srv.URL+p, "text/plain", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 500 {
			t.Fatalf("%s: got %d, want 500", p, resp.StatusCode)
		}
	}
	if !strings.Contains(buf.String(), "POST /b") {
		t.Fatalf("route POST /b answered 500 key_misconfigured but nothing logged it; log:\n%s", buf.String())
	}
}

// The burst log of a misconfigured key is kept per scope, and a default scope starts with the
// client's method. Invented methods all count as "_OTHER", so a client
// cannot make the log (or the map behind its bursts) grow one entry per
// method.
func TestInventedMethodsDoNotMultiplyMisconfigurationLogs(t *testing.T) {
	var buf syncBuf
	lg := slog.New(slog.NewTextHandler(&buf, nil))
	mw := httplock.New(httplock.Config{Locker: core.NewLocker(memorystore.New()),
		Key: httplock.FromContext(userCtxKey{}), Logger: lg})
	mux := http.NewServeMux()
	mux.Handle("/invented", mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userCtxKey{}, structUser{7})))
	}))
	defer srv.Close()
	for i := range 200 {
		req, _ := http.NewRequest(fmt.Sprintf("X%d", i), srv.URL+"/invented", nil)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 500 {
			t.Fatalf("method X%d: got %d, want 500", i, resp.StatusCode)
		}
	}
	if n := strings.Count(buf.String(), "key_misconfigured"); n != 1 {
		t.Fatalf("200 invented methods on one misconfigured route logged %d lines, want 1:\n%.2000s", n, buf.String())
	}
	if !strings.Contains(buf.String(), "_OTHER /invented") {
		t.Fatalf("the log line does not name the route as _OTHER /invented:\n%s", buf.String())
	}
}
