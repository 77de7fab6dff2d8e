package httplock_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

// rawPost sends a POST with a Content-Length body one byte per gap and
// returns the status line's code.
func rawPost(t *testing.T, addr, path string, hdr map[string]string, body []byte, gap time.Duration) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n", path, len(body))
	for k, v := range hdr {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n")
	if _, err := io.WriteString(c, b.String()); err != nil {
		t.Fatal(err)
	}
	for i := range body {
		time.Sleep(gap)
		if _, err := c.Write(body[i : i+1]); err != nil {
			t.Fatal(err)
		}
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestSlowBodyDoesNotEatMaxWait: the holder releases 200 ms into a
// 1 s MaxWait, so the key is free well within MaxWait; DESIGN.md answers
// 409 only when the lock is "not free within MaxWait". But the waiter's
// body is read ahead *before* it starts waiting, and a client that takes
// longer than MaxWait to upload (a 60 KiB form over a slow link) finds
// MaxWait spent and gets 409 "A request with the same key is in progress"
// for a key nobody holds. Before the read-ahead it would have run.
func TestSlowBodyDoesNotEatMaxWait(t *testing.T) {
	lk := core.NewLocker(memorystore.New())
	entered := make(chan struct{}, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Hold") != "" {
			entered <- struct{}{}
			time.Sleep(200 * time.Millisecond)
			return
		}
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
	})
	mw := httplock.New(httplock.Config{Locker: lk, Key: httplock.FromHeader("X-Key"), Mode: httplock.Wait, MaxWait: time.Second})
	srv := httptest.NewServer(mw(h))
	defer srv.Close()

	holder := make(chan int, 1)
	go func() {
		holder <- rawPost(t, srv.Listener.Addr().String(), "/", map[string]string{"X-Key": "k", "X-Hold": "1"}, nil, 0)
	}()
	<-entered
	start := time.Now()
	// 12 bytes, one per 100 ms: 1.2 s to upload, longer than MaxWait.
	code := rawPost(t, srv.Listener.Addr().String(), "/", map[string]string{"X-Key": "k"}, bytes.Repeat([]byte("x"), 12), 100*time.Millisecond)
	if hc := <-holder; hc != 200 {
		t.Fatalf("holder got %d", hc)
	}
	if code != http.StatusOK {
		t.Fatalf("waiter got %d after %v, though the key was free 200ms into its 1s MaxWait (holder done); want 200", code, time.Since(start).Round(time.Millisecond))
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

type userCtxKey struct{}
type structUser struct{ ID int }

// TestEachMisconfiguredRouteIsLogged: two routes whose key extractor
// finds a value of a type no key can be made of both answer 500
// key_misconfigured "with an error log"; but the error is burst-limited
// per Logger and message, process-wide, so the second route's
// misconfiguration is never logged (within 10 s) and the one log line
// names only the first route's scope. An operator fixes /a and /b stays
// broken without a trace.
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

// TestInventedMethodsDoNotMultiplyMisconfigurationLogs: the burst log of a
// misconfigured key is kept per scope, and a default scope starts with the
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
