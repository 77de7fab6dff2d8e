package httplock_test

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/memorystore"
)

// gzipWhenAccepted is a compression middleware shaped like gorilla/handlers'
// CompressHandler: when the client accepts gzip it sets Content-Encoding
// (and Vary) on the shared header map before calling next, and compresses
// what next writes on the way out.
func gzipWhenAccepted(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Add("Vary", "Accept-Encoding")
		gz := gzip.NewWriter(w)
		defer gz.Close()
		next.ServeHTTP(gzipWriter{w, gz}, r)
	})
}

type gzipWriter struct {
	http.ResponseWriter
	gz *gzip.Writer
}

func (w gzipWriter) WriteHeader(code int) {
	w.ResponseWriter.Header().Del("Content-Length")
	w.ResponseWriter.WriteHeader(code)
}
func (w gzipWriter) Write(b []byte) (int, error) { return w.gz.Write(b) }

// gzipAtWriteHeader is a compression middleware shaped like chi's Compress:
// it decides in WriteHeader, so Content-Encoding goes on the shared header
// map only as the status goes out; a response already labelled with an
// encoding is passed through as it is.
func gzipAtWriteHeader(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			next.ServeHTTP(w, r)
			return
		}
		lw := &lazyGzipWriter{ResponseWriter: w}
		defer lw.close()
		next.ServeHTTP(lw, r)
	})
}

type lazyGzipWriter struct {
	http.ResponseWriter
	wroteHeader bool
	gz          *gzip.Writer
}

func (w *lazyGzipWriter) WriteHeader(code int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	h := w.Header()
	if h.Get("Content-Encoding") == "" {
		h.Set("Content-Encoding", "gzip")
		h.Add("Vary", "Accept-Encoding")
		h.Del("Content-Length")
		w.gz = gzip.NewWriter(w.ResponseWriter)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *lazyGzipWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.gz != nil {
		return w.gz.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

func (w *lazyGzipWriter) close() {
	if w.gz != nil {
		_ = w.gz.Close()
	}
}

// The record holds the body as the handler wrote it, before an outer
// middleware compressed it, so the outer middleware's Content-Encoding is
// not recorded, whether it set it before calling the handler or as the
// status went out, and whether the handler called WriteHeader or not: a
// retry that does not accept gzip gets the plain body, unlabelled, and one
// that does gets it compressed again by that middleware.
func TestReplayOuterContentEncodingNotRecorded(t *testing.T) {
	compressors := map[string]func(http.Handler) http.Handler{
		"set before the handler":     gzipWhenAccepted,
		"set as the status goes out": gzipAtWriteHeader,
	}
	for cname, compress := range compressors {
		for _, status := range []int{http.StatusCreated, 0} { // 0: implicit 200
			name := cname + "/" + map[bool]string{true: "WriteHeader", false: "implicit 200"}[status != 0]
			t.Run(name, func(t *testing.T) {
				outerContentEncodingScene(t, compress, status)
			})
		}
	}
}

func outerContentEncodingScene(t *testing.T, compress func(http.Handler) http.Handler, status int) {
	locker := core.NewLocker(memorystore.New(), core.WithLogger(httpcases.Quiet))
	runs := 0
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs++
		w.Header().Set("Content-Type", "application/json")
		if status != 0 {
			w.WriteHeader(status)
		}
		_, _ = io.WriteString(w, `{"order":"ord_1"}`)
	})
	lock := httplock.New(httplock.Config{
		Locker: locker,
		Key:    httplock.FromHeader("Idempotency-Key"),
		Replay: &httplock.ReplayConfig{},
	})
	mux := http.NewServeMux()
	mux.Handle("POST /orders", lock(h))
	srv := httptest.NewServer(compress(mux))
	defer srv.Close()
	// No transparent decompression: look at what is on the wire.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	defer client.CloseIdleConnections()
	wantStatus := status
	if status == 0 {
		wantStatus = http.StatusOK
	}

	do := func(acceptGzip bool) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/orders", strings.NewReader(`{}`))
		req.Header.Set("Idempotency-Key", "k1")
		if acceptGzip {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body io.Reader = resp.Body
		if resp.Header.Get("Content-Encoding") == "gzip" {
			if body, err = gzip.NewReader(resp.Body); err != nil {
				t.Fatalf("labelled gzip, not gzip: %v", err)
			}
		}
		b, err := io.ReadAll(body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(b)
	}

	first, want := do(true)
	if first.StatusCode != wantStatus || first.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("first: %d Content-Encoding %q", first.StatusCode, first.Header.Get("Content-Encoding"))
	}
	for _, gz := range []bool{false, true} {
		retry, body := do(gz)
		if retry.Header.Get(httplock.HeaderIdempotentReplayed) != "true" || retry.StatusCode != wantStatus || body != want {
			t.Errorf("retry (gzip accepted: %v): %d %q replayed=%q, want the replay of %d %q",
				gz, retry.StatusCode, body, retry.Header.Get(httplock.HeaderIdempotentReplayed), wantStatus, want)
		}
		if ce, wantCE := retry.Header.Get("Content-Encoding"), map[bool]string{true: "gzip"}[gz]; ce != wantCE {
			t.Errorf("retry (gzip accepted: %v): Content-Encoding %q, want %q", gz, ce, wantCE)
		}
		if ct := retry.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("retry (gzip accepted: %v): Content-Type %q, the handler's is application/json", gz, ct)
		}
	}
	if runs != 1 {
		t.Errorf("handler ran %d times, want 1", runs)
	}
}

// Of the allowed headers an outer middleware set before the lock, the
// record keeps those the handler changed, with the handler's value, and
// leaves out those it did not touch: they are the outer middleware's to
// set again, or not, around the replay.
func TestReplayRecordsOnlyHeadersTheHandlerSet(t *testing.T) {
	send := headerScene(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Outer") != "" {
			w.Header().Set("Cache-Control", "private")
			w.Header().Set("Content-Language", "en")
		}
	}, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Location", "/orders/1")
		w.WriteHeader(http.StatusCreated)
	}, nil)
	send(true)
	got := send(false)
	if got.Get(httplock.HeaderIdempotentReplayed) != "true" {
		t.Fatalf("retry not replayed: %v", got)
	}
	for name, want := range map[string]string{"Cache-Control": "no-store", "Location": "/orders/1", "Content-Language": ""} {
		if v := got.Get(name); v != want {
			t.Errorf("replayed %s: %q, want %q", name, v, want)
		}
	}
}

// A replayed header replaces what an outer middleware put under its name on
// the retry, and a header recorded with several values replays all of them,
// in order.
func TestReplayHeaderReplacesAndKeepsEveryValue(t *testing.T) {
	send := headerScene(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Cache-Control", "private")
	}, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Add("X-Trail", "first")
		w.Header().Add("X-Trail", "second")
		w.WriteHeader(http.StatusCreated)
	}, []string{"cache-control", "x-trail"})
	send(false)
	got := send(false)
	if got.Get(httplock.HeaderIdempotentReplayed) != "true" {
		t.Fatalf("retry not replayed: %v", got)
	}
	if v := got.Values("Cache-Control"); len(v) != 1 || v[0] != "no-store" {
		t.Errorf("replayed Cache-Control %q, want only the recorded no-store", v)
	}
	if v := got.Values("X-Trail"); len(v) != 2 || v[0] != "first" || v[1] != "second" {
		t.Errorf("replayed X-Trail %q, want first, second", v)
	}
}

// headerScene is handler h behind the replaying middleware (keyed by the
// Idempotency-Key, recording headers, or the default list when nil), behind
// an outer middleware that runs before it on every request. send posts with
// the same key each time, with X-Outer when outer, and returns the
// response's header.
func headerScene(outer, h http.HandlerFunc, headers []string) (send func(outer bool) http.Header) {
	locker := core.NewLocker(memorystore.New(), core.WithLogger(httpcases.Quiet))
	lock := httplock.New(httplock.Config{
		Locker: locker,
		Key:    httplock.FromHeader("Idempotency-Key"),
		Scope:  "orders",
		Replay: &httplock.ReplayConfig{Headers: headers},
	})(h)
	stack := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		outer(w, r)
		lock.ServeHTTP(w, r)
	})
	return func(withOuter bool) http.Header {
		req := httptest.NewRequest(http.MethodPost, "/orders", nil)
		req.Header.Set("Idempotency-Key", "k1")
		if withOuter {
			req.Header.Set("X-Outer", "1")
		}
		w := httptest.NewRecorder()
		stack.ServeHTTP(w, req)
		return w.Result().Header
	}
}
