package httpcases

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/benchratio"
)

// BenchBody is what the replay benchmarks' handler answers, with 201 and
// Content-Type: application/json: an order of a realistic size.
var BenchBody = []byte(`{"order":"ord_8e03978e40d543e8bc936894a57f9324","status":"created","amount":4200,"currency":"eur"}`)

// ReplayBuild returns a framework's router for the benchmark route, with
// the stand-in auth middleware and, when locked, the reqlock middleware over
// l, keyed by the user joined with the Idempotency-Key, with replay when
// replay is not nil. Its handler answers 201 with BenchBody through the
// framework.
type ReplayBuild func(l *core.Locker, locked bool, replay *httplock.ReplayConfig) http.Handler

// BenchReplay measures replay beside its floors, in one run per store:
//
//   - "first" is a request with a fresh key through the middleware with
//     replay (its acquire looks for a record, its release writes one),
//     against "plain", the same request through the same middleware
//     without replay: first/plain is what replay adds to a request that
//     runs; the bar is 1.15.
//   - "hit" is a request whose key has a record (one round trip: the
//     acquire returns the record), against "get", a bare GET of a value as
//     long as that record on the same Redis, and "bare", the router without
//     the middleware: (hit − bare)/get is what a replay costs beside
//     fetching its bytes; the bar is 1.3. Redis only. "ratio-layers" times
//     the same loop with "core-hit" beside it, the Locker finding the
//     record, and reports what the framework and the middleware add to it. What a hit adds is
//     mostly server time: the replay is found by the acquire script, so
//     that a request that finds none has the lock in the same round trip.
//
// The interleaved "ratio" lines are the ones to read; the others are the
// same cycles one after another, with allocations.
func BenchReplay(b *testing.B, build ReplayBuild) {
	for _, st := range Stores {
		if st.NoBench {
			continue
		}
		b.Run(st.Name, func(b *testing.B) {
			be := st.Open(b)
			l := core.NewLocker(be.Store, core.WithLogger(Quiet))
			replay := &httplock.ReplayConfig{Retention: time.Minute} // fresh keys pile up for no longer
			plain, replaying, bare := build(l, true, nil), build(l, true, replay), build(l, false, nil)
			n := 0
			fresh := func() string { n++; return strconv.Itoa(n) }
			first := func(b *testing.B, h http.Handler) benchratio.Cycle {
				return benchratio.Cycle{Run: func() { serveReplay(b, h, fresh(), false) }}
			}
			serveReplay(b, replaying, "hit", false) // records it
			cycles := func(b *testing.B) []benchratio.Cycle {
				p, f := first(b, plain), first(b, replaying)
				p.Name, f.Name = "plain", "first"
				return []benchratio.Cycle{p, f}
			}
			benchratio.Each(b, "", cycles)
			b.Run("ratio-first", func(b *testing.B) { benchratio.Ratios(b, cycles(b)...) })
			if be.Client == nil {
				return
			}
			get := getFloor(b, be)
			hitCycles := func(b *testing.B) []benchratio.Cycle {
				return []benchratio.Cycle{
					{Name: "get", Run: func() { get(b) }},
					{Name: "bare", Run: func() { serveReplay(b, bare, "bare", false) }},
					{Name: "hit", Run: func() { serveReplay(b, replaying, "hit", true) }},
				}
			}
			benchratio.Each(b, "", hitCycles)
			b.Run("ratio-hit", func(b *testing.B) {
				ns := benchratio.Measure(b, hitCycles(b)...)
				get, bare, hit := ns[0], ns[1], ns[2]
				b.ReportMetric(hit/get, "hit/get")
				b.ReportMetric((hit-bare)/get, "overhead/get")
			})
			// The hit's layers: the same loop with the core's part of it, the
			// Locker finding the record, timed beside it.
			hitKey := benchLockKey(b, l, be, "hit")
			coreHit := benchratio.Cycle{Name: "core-hit", Run: func() {
				if lk, rec, err := l.TryObtainOrRecord(context.Background(), hitKey); err != nil || lk != nil || rec == nil {
					b.Fatalf("core hit: lock %v, record %v, %v", lk, rec != nil, err)
				}
			}}
			b.Run("ratio-layers", func(b *testing.B) {
				ns := benchratio.Measure(b, append(hitCycles(b), coreHit)...)
				get, bare, hit, core := ns[0], ns[1], ns[2], ns[3]
				b.ReportMetric(core/get, "core-hit/get")
				b.ReportMetric(hit-core-bare, "http-layer-ns")
			})
		})
	}
}

// getFloor is a bare GET, on the store's Redis, of a value as long as the
// record the hit cycle replays.
func getFloor(b *testing.B, be Backend) func(*testing.B) {
	ctx := context.Background()
	keys, err := be.Client.Keys(ctx, "*:record").Result()
	if err != nil || len(keys) == 0 {
		b.Fatalf("no record to size the GET floor by: %v %v", keys, err)
	}
	size := len(be.Client.Get(ctx, keys[0]).Val())
	const key = "reqlock-bench:get-floor"
	if err := be.Client.Set(ctx, key, strings.Repeat("r", size), 0).Err(); err != nil {
		b.Fatal(err)
	}
	return func(b *testing.B) {
		if v, err := be.Client.Get(ctx, key).Bytes(); err != nil || len(v) != size {
			b.Fatalf("GET: %d bytes, %v", len(v), err)
		}
	}
}

// benchLockKey is the Locker key of the benchmark request with this
// Idempotency-Key, which has a record: the user joined with the key, in the
// route's default scope, whose template the frameworks spell with braces
// (net/http, Echo v5) or with colons (Gin, Echo v4).
func benchLockKey(b *testing.B, l *core.Locker, be Backend, idempotencyKey string) string {
	joined := "5:alice" + strconv.Itoa(len(idempotencyKey)) + ":" + idempotencyKey
	for _, route := range []string{BenchPath, ColonPath(BenchPath)} {
		key := httplock.LockKey(httplock.DefaultScope(http.MethodPost, route), joined)
		skey, err := l.StoreKey(key)
		if err != nil {
			b.Fatal(err)
		}
		if n, _ := be.Client.Exists(context.Background(), skey+":record").Result(); n == 1 {
			return key
		}
	}
	b.Fatalf("no record under the lock keys a %s request with Idempotency-Key %q can have", BenchPath, idempotencyKey)
	return ""
}

func serveReplay(b *testing.B, h http.Handler, key string, replayed bool) {
	r := httptest.NewRequest("POST", benchURL, nil)
	r.Header.Set(UserHeader, "alice")
	r.Header.Set(httplock.HeaderIdempotencyKey, `"`+key+`"`)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusCreated || (w.Header().Get(httplock.HeaderIdempotentReplayed) == "true") != replayed {
		b.Fatalf("status %d, replayed %q, want %v: %s", w.Code, w.Header().Get(httplock.HeaderIdempotentReplayed), replayed, w.Body)
	}
}
