package httplock_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
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

// Wait mode answers 409 only when the key is not free within MaxWait, and
// the body is read ahead beside the wait, not before it: a client that
// takes longer than MaxWait to upload (a form over a slow link) still runs
// once the holder, done 200 ms into a 1 s MaxWait, has let the key go.
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
	mw := httplock.New(httplock.Config{Locker: lk, Key: httplock.FromHeader("X-Key"), Mode: httplock.Wait, MaxWait: time.Second, Scope: "uploads"})
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
