package httplock_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/memorystore"
)

// An allowed header that an outer middleware set and the handler removed
// was not in the response the client got, so it is not in the replay
// either, though the outer middleware sets it again around the retry.
func TestReplayKeepsAHeaderTheHandlerRemoved(t *testing.T) {
	for name, remove := range map[string]func(http.Header){
		"Del":         func(h http.Header) { h.Del("Cache-Control") },
		"empty slice": func(h http.Header) { h["Cache-Control"] = []string{} },
	} {
		t.Run(name, func(t *testing.T) {
			locker := core.NewLocker(memorystore.New(), core.WithLogger(httpcases.Quiet))
			outer := func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Cache-Control", "public, max-age=600")
					next.ServeHTTP(w, r)
				})
			}
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				remove(w.Header())
				w.WriteHeader(http.StatusCreated)
			})
			stack := outer(httplock.New(httplock.Config{
				Locker: locker,
				Key:    httplock.FromHeader("Idempotency-Key"),
				Scope:  "orders",
				Replay: &httplock.ReplayConfig{},
			})(h))
			send := func() http.Header {
				req := httptest.NewRequest(http.MethodPost, "/orders", nil)
				req.Header.Set("Idempotency-Key", "k1")
				w := httptest.NewRecorder()
				stack.ServeHTTP(w, req)
				return w.Result().Header
			}
			first := send()
			again := send()
			if again.Get(httplock.HeaderIdempotentReplayed) != "true" {
				t.Fatalf("retry not replayed: %v", again)
			}
			if got, want := again.Values("Cache-Control"), first.Values("Cache-Control"); len(got) != len(want) {
				t.Errorf("replayed Cache-Control %q, but the first response had %q", got, want)
			}
		})
	}
}
