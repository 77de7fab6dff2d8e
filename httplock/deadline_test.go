package httplock_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/redistest"
)

// withDeadline is a server-side timeout middleware of the plainest kind: it
// only puts a deadline on the request's context.
func withDeadline(d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// A request whose deadline (set by the server, not a client that left) ends
// while it waits for its key, or while the store does not answer, gets the
// answer it would have had without the deadline: 409 with Retry-After, or
// 503. Taken for a client that left, it got no answer at all, which net/http
// sends as an empty 200: a duplicate payment reported as done.
func TestRequestDeadlineIsNotClientGone(t *testing.T) {
	for _, tc := range []struct {
		name string
		// locker returns the Locker to serve with, in the state the case
		// needs: the key held, or the store hung.
		locker func(t *testing.T) *core.Locker
		mode   httplock.Mode
		want   int
	}{
		{"deadline_while_waiting", func(t *testing.T) *core.Locker {
			l := core.NewLocker(core.NewRedisStore(redistest.Start(t).Client(t)))
			held, err := l.TryObtain(context.Background(), httplock.LockKey("orders", "alice"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = held.ReleaseDetached(context.Background()) })
			return l
		}, httplock.Wait, http.StatusConflict},
		{"deadline_while_store_hangs", func(t *testing.T) *core.Locker {
			srv := redistest.Start(t)
			l := core.NewLocker(core.NewRedisStore(srv.Client(t)))
			srv.Pause()
			t.Cleanup(srv.Resume) // before the Kill that Start registered
			return l
		}, httplock.Reject, http.StatusServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ran atomic.Bool
			lock := httplock.New(httplock.Config{
				Locker: tc.locker(t), Key: httplock.FromHeader("X-User"), Scope: "orders",
				Mode: tc.mode, MaxWait: 5 * time.Second, StoreTimeout: 2 * time.Second,
			})
			srv := httptest.NewServer(withDeadline(200*time.Millisecond,
				lock(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { ran.Store(true) }))))
			defer srv.Close()

			req, err := http.NewRequest("POST", srv.URL+"/orders", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-User", "alice")
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want || resp.Header.Get("Retry-After") == "" ||
				resp.Header.Get("Content-Type") != httplock.ContentTypeProblem {
				t.Fatalf("got %d, Retry-After %q, Content-Type %q; want %d with Retry-After and a problem",
					resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("Content-Type"), tc.want)
			}
			if ran.Load() {
				t.Fatal("the handler ran")
			}
		})
	}
}
