package httplock

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// With replay the whole request body is in memory before the lock is
// taken, so a request that then waits reads nothing ahead: its handler
// gets the very bytes the fingerprint was taken of, with no second copy.
func TestReplayWaitReadsBodyOnce(t *testing.T) {
	l := core.NewLocker(memorystore.New())
	e, err := NewEngine(Config{Locker: l, Mode: Wait, MaxWait: 10 * time.Second, Replay: &ReplayConfig{}})
	if err != nil {
		t.Fatal(err)
	}
	key := LockKey("s", "k")
	holder, err := l.TryObtain(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	go func() { // release once the request waits
		for {
			e.waiting.mu.Lock()
			n := e.waiting.n[key]
			e.waiting.mu.Unlock()
			if n > 0 {
				_ = holder.Release(context.Background())
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	const body = `{"item":"tea"}`
	r := httptest.NewRequest("POST", "/orders", strings.NewReader(body))
	var got []byte
	var direct bool
	replayed, rej := e.ServeResponse(httptest.NewRecorder(), r, "s", "k", nil, func(_ context.Context, w http.ResponseWriter) error {
		rc, ok := r.Body.(readCloser)
		_, direct = rc.Reader.(*bytes.Reader)
		direct = direct && ok
		got, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusCreated)
		return nil
	})
	if replayed || rej != nil {
		t.Fatalf("replayed %v, rejected %v; want a run", replayed, rej)
	}
	if string(got) != body {
		t.Fatalf("handler read %q, want %q", got, body)
	}
	if !direct {
		t.Fatalf("the body was read again ahead of the wait: handler got %T", r.Body)
	}
}
