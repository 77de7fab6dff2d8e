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
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore"
)

// Replay over Sentinel with replica acks: a response recorded before a
// failover is replayed after it by the promoted master, with the old one
// gone, and the handler does not run again.
func TestReplayAcrossSentinelFailover(t *testing.T) {
	sn := redistest.StartSentinel(t)
	var runs atomic.Int32
	instance := func() *httptest.Server { // one instance of the service
		store := redisstore.New(sn.Client(t)).WithReplicaAcks(1, 2*time.Second)
		l := core.NewLocker(store, core.WithLogger(httpcases.Quiet))
		mw := httplock.New(httplock.Config{
			Locker: l, Key: httplock.IdempotencyKey(),
			Replay: &httplock.ReplayConfig{}, StoreTimeout: 5 * time.Second, Logger: httpcases.Quiet, Scope: "payments",
		})
		ts := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n := runs.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"order":"ord_`+string(rune('0'+n))+`"}`)
		})))
		t.Cleanup(ts.Close)
		return ts
	}
	post := func(ts *httptest.Server) (int, string, http.Header) {
		req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(`{"amount":4200}`))
		req.Header.Set(httplock.HeaderIdempotencyKey, `"pay-1"`)
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), resp.Header
	}

	ts := instance()
	status, first, _ := post(ts)
	if status != http.StatusCreated || runs.Load() != 1 {
		t.Fatalf("first request: %d %q, %d runs", status, first, runs.Load())
	}
	probe, cancelProbe := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancelProbe()
	old, err := sn.Master(probe)
	if err != nil {
		t.Fatal(err)
	}
	promoted := sn.Failover(t) // bounded by its own deadline
	old.Kill()                 // whatever answers now is the promoted master
	// The retries' bound starts after the failover, however long it took.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if n, err := promoted.Client(t).Exists(ctx, mustRecordKey(t, "pay-1")).Result(); err != nil || n != 1 {
		t.Fatalf("the promoted master has %d records for the key (%v); the record's write was acked by it", n, err)
	}
	// The client retries what it gets 503 for, as it should: the first
	// commands after the switch can fail on connections that go-redis
	// closes as it follows the sentinels.
	for ctx.Err() == nil {
		status, body, h := post(ts)
		if status == http.StatusServiceUnavailable && runs.Load() == 1 {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if status != http.StatusCreated || body != first || h.Get(httplock.HeaderIdempotentReplayed) != "true" || runs.Load() != 1 {
			t.Fatalf("retry after the failover: %d %q (replayed %q), %d runs; want %q replayed and one run",
				status, body, h.Get(httplock.HeaderIdempotentReplayed), runs.Load(), first)
		}
		return
	}
	t.Fatal("the store never answered after the failover")
}

// mustRecordKey is the Redis key of the record that a middleware with the
// default prefix and scope writes for an Idempotency-Key on POST /.
func mustRecordKey(t *testing.T, idempotencyKey string) string {
	t.Helper()
	l := core.NewLocker(memorystore.New())
	skey, err := l.StoreKey(httplock.LockKey("payments", idempotencyKey))
	if err != nil {
		t.Fatal(err)
	}
	return skey + ":record"
}
