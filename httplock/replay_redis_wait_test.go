package httplock

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
)

// On Redis, in Wait mode, a request that waits in line behind the first
// run of its key is answered with that run's recorded response: its polls
// in line ask for the record (the flag, five keys), and a later request
// finds it at once (the record's key last, four keys).
func TestReplayWaitOnRedis(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(redistest.ClientOptions(srv.Addr))
	t.Cleanup(func() { _ = c.Close() })
	l := core.NewLocker(core.NewRedisStore(c), core.WithTTL(2*time.Second))
	e, err := NewEngine(Config{Locker: l, Mode: Wait, MaxWait: 10 * time.Second, Replay: &ReplayConfig{}})
	if err != nil {
		t.Fatal(err)
	}
	key := LockKey("s", "k")
	serve := func(run func()) (replayed bool, code int, body string) {
		r := httptest.NewRequest("POST", "/orders", strings.NewReader(`{"item":"tea"}`))
		w := httptest.NewRecorder()
		replayed, rej := e.ServeResponse(w, r, "s", "k", nil, func(_ context.Context, w http.ResponseWriter) error {
			run()
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte("order 1"))
			return nil
		})
		if rej != nil {
			t.Errorf("rejected: %v", rej)
		}
		return replayed, w.Code, w.Body.String()
	}

	firstIn := make(chan struct{})
	firstDone := make(chan struct{})
	go func() {
		defer close(firstDone)
		if replayed, _, _ := serve(func() {
			close(firstIn)
			// Hold the key until the second request waits in line.
			deadline := time.Now().Add(5 * time.Second)
			for time.Now().Before(deadline) {
				e.waiting.mu.Lock()
				n := e.waiting.n[key]
				e.waiting.mu.Unlock()
				if n > 0 {
					return
				}
				time.Sleep(time.Millisecond)
			}
			t.Error("the second request never waited")
		}); replayed {
			t.Error("the first request was replayed")
		}
	}()
	<-firstIn
	ran := false
	replayed, code, body := serve(func() { ran = true })
	<-firstDone
	if ran || !replayed || code != http.StatusCreated || body != "order 1" {
		t.Fatalf("request that waited behind the first run: ran %v, replayed %v, %d %q; want the replay", ran, replayed, code, body)
	}
	ran = false
	replayed, code, body = serve(func() { ran = true })
	if ran || !replayed || code != http.StatusCreated || body != "order 1" {
		t.Fatalf("later request: ran %v, replayed %v, %d %q; want the replay", ran, replayed, code, body)
	}
}
