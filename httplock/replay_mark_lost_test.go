package httplock_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/internal/lockertest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// A request whose lock lapsed before its run started (the answer of the
// acquire that marked its run came late, after the lease) lost its key to
// another instance, which ran the handler and recorded it. The store
// answered: it is not unavailable, so fail-open must not run the handler
// unlocked a second time; the request must get an answer that sends its
// retry to the record.
func TestReplayMarkAfterLockLostDoesNotFailOpen(t *testing.T) {
	px := redistest.StartProxied(t)
	opts := redistest.ClientOptions(px.Proxy.Addr())
	opts.ReadTimeout = 30 * time.Second // the held acquire waits for its answer
	via := redis.NewClient(opts)
	t.Cleanup(func() { _ = via.Close() })
	ctx := lockertest.Context(t, 30*time.Second)

	var runs atomic.Int32
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs.Add(1)
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, "paid")
	})
	server := func(l *core.Locker) *httptest.Server {
		mw := httplock.New(httplock.Config{
			Locker: l, Key: httplock.FromHeader("Idempotency-Key"), Replay: &httplock.ReplayConfig{},
			FailOpen: true, StoreTimeout: 30 * time.Second, Logger: httpcases.Quiet, Scope: "payments",
		})
		ts := httptest.NewServer(mw(handler))
		t.Cleanup(ts.Close)
		return ts
	}
	paused := server(core.NewLocker(redisstore.New(via), core.WithTTL(300*time.Millisecond),
		core.WithoutWatchdog(), core.WithLogger(httpcases.Quiet)))
	healthy := server(core.NewLocker(redisstore.New(px.Direct), core.WithLogger(httpcases.Quiet)))
	post := func(ts *httptest.Server, key string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader("{}"))
		req.Header.Set("Idempotency-Key", key)
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Error(err)
			return 0, ""
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	// Load the scripts, so that the held EVALSHA is the one that lands.
	if status, _ := post(paused, "warm-up"); status != http.StatusCreated {
		t.Fatalf("warm-up: %d", status)
	}
	runs.Store(0)

	held := make(chan *faultproxy.Held, 1)
	var arm sync.Once // the first command that marks the run only: the acquire
	redistest.AddCommandHook(t, ctx, via, redistest.CommandHook{Sent: func(cmd redis.Cmder) {
		for _, a := range cmd.Args() {
			if k, ok := a.(string); ok && strings.HasSuffix(k, ":run") {
				arm.Do(func() { held <- px.Proxy.HoldNext(faultproxy.Downstream) }) // its answer
				return
			}
		}
	}})
	first := make(chan int, 1)
	go func() {
		status, _ := post(paused, "k")
		first <- status
	}()
	h := <-held
	t.Cleanup(h.Release)
	redistest.WaitCaptured(t, h, "the acquire's answer")
	// A lock is the key without a suffix after its {hash tag}.
	lockertest.WaitFor(t, "the paused request's lease to run out", func() bool {
		return len(px.Direct.Keys(ctx, "*}").Val()) == 0
	})
	if status, body := post(healthy, "k"); status != http.StatusCreated || body != "paid" {
		t.Fatalf("the request on the healthy instance: %d %q", status, body)
	}
	h.Release()
	status := <-first
	if n := runs.Load(); n != 1 {
		t.Fatalf("the handler ran %d times for one key (the paused request answered %d): "+
			"a lock lost before its run started was taken for a store down, and run unlocked", n, status)
	}
}
