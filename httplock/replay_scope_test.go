package httplock_test

import (
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

// A record is scoped like the lock. With the default scope (method and
// route) a PUT with a POST's key is in another scope and runs; with one
// Config.Scope for both, it finds the POST's record, whose fingerprint is
// not its own: 422, and nothing runs.
func TestReplayMismatchWithinScope(t *testing.T) {
	for _, c := range []struct {
		name    string
		scope   string
		status  int // the PUT's
		putRuns int
	}{
		{"default scope: method and route", "", http.StatusCreated, 1},
		{"one scope for both methods", "orders", http.StatusUnprocessableEntity, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			locker := core.NewLocker(memorystore.New(), core.WithLogger(httpcases.Quiet))
			runs := map[string]int{}
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				runs[r.Method]++
				w.WriteHeader(http.StatusCreated)
				_, _ = io.WriteString(w, r.Method)
			})
			lock := httplock.New(httplock.Config{
				Locker: locker,
				Key:    httplock.FromHeader("Idempotency-Key"),
				Scope:  c.scope,
				Replay: &httplock.ReplayConfig{},
			})
			mux := http.NewServeMux()
			mux.Handle("/orders", lock(h)) // one route, any method
			do := func(method string) int {
				req := httptest.NewRequest(method, "/orders", strings.NewReader(`{}`))
				req.Header.Set("Idempotency-Key", "k1")
				w := httptest.NewRecorder()
				mux.ServeHTTP(w, req)
				return w.Code
			}
			if s := do(http.MethodPost); s != http.StatusCreated {
				t.Fatalf("POST: %d", s)
			}
			if s := do(http.MethodPut); s != c.status || runs[http.MethodPut] != c.putRuns || runs[http.MethodPost] != 1 {
				t.Errorf("PUT with the POST's key: %d, handler runs %v; want %d and %d PUT run(s)", s, runs, c.status, c.putRuns)
			}
		})
	}
}
