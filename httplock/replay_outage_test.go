package httplock_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// Replay with the store paused (SIGSTOP): fail-closed answers 503 with
// Retry-After and runs nothing; fail-open runs the handler unlocked and
// records nothing, so once the store is back the same key runs again and
// is recorded then.
func TestReplayStoreOutage(t *testing.T) {
	for _, failOpen := range []bool{false, true} {
		name := "fail-closed"
		if failOpen {
			name = "fail-open"
		}
		t.Run(name, func(t *testing.T) {
			srv := redistest.Start(t)
			l := core.NewLocker(redisstore.New(srv.Client(t)), core.WithTTL(time.Second), core.WithLogger(httpcases.Quiet))
			var runs atomic.Int32
			mw := httplock.New(httplock.Config{
				Locker: l, Key: httplock.FromHeader("Idempotency-Key"), Replay: &httplock.ReplayConfig{},
				FailOpen: failOpen, StoreTimeout: 200 * time.Millisecond, Logger: httpcases.Quiet, Scope: "payments",
			})
			ts := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := runs.Add(1)
				w.WriteHeader(http.StatusCreated)
				_, _ = io.WriteString(w, "order "+string(rune('0'+n)))
			})))
			defer ts.Close()
			post := func() (int, string, http.Header) {
				req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader("{}"))
				req.Header.Set("Idempotency-Key", "k-1")
				resp, err := ts.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(body), resp.Header
			}

			srv.Pause()
			status, _, h := post()
			srv.Resume()
			switch {
			case !failOpen && (status != http.StatusServiceUnavailable || h.Get("Retry-After") == "" || runs.Load() != 0):
				t.Fatalf("store paused, fail-closed: %d (Retry-After %q), %d runs; want 503 with Retry-After and nothing run", status, h.Get("Retry-After"), runs.Load())
			case failOpen && (status != http.StatusCreated || runs.Load() != 1 || h.Get(httplock.HeaderIdempotentReplayed) != ""):
				t.Fatalf("store paused, fail-open: %d, %d runs; want the handler run once, unlocked", status, runs.Load())
			}

			// Nothing was recorded: the key runs now, and is recorded.
			want := runs.Load() + 1
			if status, _, _ := post(); status != http.StatusCreated || runs.Load() != want {
				t.Fatalf("store back: %d, %d runs; want the handler run (nothing was recorded during the outage)", status, runs.Load())
			}
			status, body, h := post()
			if status != http.StatusCreated || runs.Load() != want || h.Get(httplock.HeaderIdempotentReplayed) != "true" ||
				body != "order "+string(rune('0'+want)) {
				t.Fatalf("retry: %d %q (replayed %q), %d runs; want the recorded response", status, body, h.Get(httplock.HeaderIdempotentReplayed), runs.Load())
			}
		})
	}
}

// Replay in Wait mode: a client that leaves while its POST waits gets
// nothing run for it. The first response here is a 503, which is not
// recorded, so a waiter that stayed would run the handler: the departed one
// must not.
func TestReplayClientGoneWhileWaiting(t *testing.T) {
	srv := redistest.Start(t)
	l := core.NewLocker(redisstore.New(srv.Client(t)), core.WithLogger(httpcases.Quiet))
	var runs atomic.Int32
	inside, finish := make(chan struct{}), make(chan struct{})
	mw := httplock.New(httplock.Config{
		Locker: l, Key: httplock.FromHeader("Idempotency-Key"), Replay: &httplock.ReplayConfig{},
		Mode: httplock.Wait, MaxWait: 5 * time.Second, Logger: httpcases.Quiet, Scope: "payments",
	})
	ts := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if runs.Add(1) == 1 {
			close(inside)
			<-finish
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, "order 2")
	})))
	defer ts.Close()
	post := func(ctx context.Context) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, strings.NewReader(`{"sku":1}`))
		req.Header.Set("Idempotency-Key", "k-1")
		return ts.Client().Do(req)
	}
	first := make(chan error, 1)
	go func() {
		resp, err := post(context.Background())
		if err == nil {
			resp.Body.Close()
		}
		first <- err
	}()
	<-inside
	ctx, leave := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() {
		_, err := post(ctx)
		gone <- err
	}()
	time.Sleep(200 * time.Millisecond) // the second request is waiting
	leave()
	if err := <-gone; err == nil {
		t.Fatal("the departed client got an answer")
	}
	close(finish)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // what the departed request would have run, it runs by now
	if n := runs.Load(); n != 1 {
		t.Fatalf("the handler ran %d times; want once: the departed client's request must not run", n)
	}
	// A retry runs (nothing was recorded), and the one after it replays.
	for i, wantReplay := range []string{"", "true"} {
		resp, err := post(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated || string(body) != "order 2" || runs.Load() != 2 ||
			resp.Header.Get(httplock.HeaderIdempotentReplayed) != wantReplay {
			t.Fatalf("retry %d: %d %q (replayed %q), %d runs; want order 2, run once", i, resp.StatusCode, body, resp.Header.Get(httplock.HeaderIdempotentReplayed), runs.Load())
		}
	}
}
