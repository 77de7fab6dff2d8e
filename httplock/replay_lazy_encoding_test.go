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
)

// gzipAtWriteHeader is a compression middleware shaped like chi's Compress:
// it decides in WriteHeader, not before calling next, so Content-Encoding
// goes on the shared header map only when the status goes out; a response
// already labelled with an encoding is passed through as it is.
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

// A compression middleware outside the lock that sets Content-Encoding in
// WriteHeader (chi's Compress does) labels the bytes it compresses, not the
// plain body the record keeps. The capture reads the headers after passing
// WriteHeader down, so it records that label as the handler's: a retry
// that does not accept gzip gets the plain body labelled gzip, and one that
// does gets it uncompressed, still labelled gzip (the middleware leaves a
// response that already has an encoding alone). When the handler writes
// without calling WriteHeader, the capture reads the headers first and all
// is well, which shows the order is the fault.
func TestReplayLazyOuterContentEncodingNotRecorded(t *testing.T) {
	for name, explicit := range map[string]bool{"WriteHeader": true, "implicit 200": false} {
		t.Run(name, func(t *testing.T) {
			locker := core.NewLocker(core.NewMemoryStore(), core.WithLogger(httpcases.Quiet))
			runs := 0
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				runs++
				w.Header().Set("Content-Type", "application/json")
				if explicit {
					w.WriteHeader(http.StatusOK)
				}
				_, _ = io.WriteString(w, `{"order":"ord_1"}`)
			})
			lock := httplock.New(httplock.Config{
				Locker: locker,
				Key:    httplock.FromHeader("Idempotency-Key"),
				Replay: &httplock.ReplayConfig{},
			})
			srv := httptest.NewServer(gzipAtWriteHeader(lock(h)))
			defer srv.Close()
			client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
			defer client.CloseIdleConnections()

			do := func(acceptGzip bool) (*http.Response, string, error) {
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
						return resp, "", err
					}
				}
				b, err := io.ReadAll(body)
				return resp, string(b), err
			}

			first, want, err := do(true)
			if err != nil || first.Header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("first: Content-Encoding %q, %v", first.Header.Get("Content-Encoding"), err)
			}
			for _, gz := range []bool{false, true} {
				retry, body, err := do(gz)
				if retry.Header.Get(httplock.HeaderIdempotentReplayed) != "true" {
					t.Fatalf("retry (gzip accepted: %v) not replayed", gz)
				}
				if err != nil || body != want {
					t.Errorf("retry (gzip accepted: %v): Content-Encoding %q, body %q (%v), want %q",
						gz, retry.Header.Get("Content-Encoding"), body, err, want)
				}
			}
			if runs != 1 {
				t.Errorf("handler ran %d times, want 1", runs)
			}
		})
	}
}
