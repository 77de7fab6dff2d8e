package httplock_test

import (
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/memorystore"
)

// Clients choose methods, paths and keys: 100,000 requests with a distinct
// key each, invented methods and random paths make a bounded number of
// metric streams, none naming a key. One middleware wraps a whole mux (no
// route template: the scope is the method alone), one a route that takes
// every method.
func TestTelemetryStreamsBounded(t *testing.T) {
	tel := httpcases.NewTelemetry(t)
	l := core.NewLocker(memorystore.New(), core.WithLogger(httpcases.Quiet))
	cfg := httplock.Config{Locker: l, Key: httplock.FromHeader("X-Key"), Telemetry: tel.Config(), Logger: httpcases.Quiet}
	lock := httplock.New(cfg)
	ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	inner := http.NewServeMux()
	inner.Handle("/orders/{id}", lock(ok))
	inner.Handle("POST /pay", ok)
	outer := lock(inner)

	n := 100_000
	if testing.Short() {
		n = 10_000
	}
	methods := []string{"GET", "POST", "PUT", "DELETE", "PATCH"}
	rng := rand.New(rand.NewPCG(1, 2))
	deadline := time.Now().Add(2 * time.Minute)
	sent := 0
	for i := range n {
		if i%1000 == 0 && time.Now().After(deadline) {
			break // a slow machine: what was sent so far makes the point
		}
		method := methods[rng.IntN(len(methods))]
		if rng.IntN(2) == 0 {
			method = "M" + strconv.Itoa(rng.IntN(1<<30)) // invented
		}
		path := "/orders/" + strconv.Itoa(i)
		switch rng.IntN(3) {
		case 0:
			path = "/x" + strconv.Itoa(rng.IntN(1<<30))
		case 1:
			path = "/pay"
		}
		r := httptest.NewRequest("GET", path, nil)
		r.Method = method
		r.Header.Set("X-Key", "key-"+strconv.Itoa(i))
		outer.ServeHTTP(httptest.NewRecorder(), r)
		sent++
	}
	streams := tel.Streams(t, httplock.MetricRequests)
	var total int64
	for _, s := range streams {
		total += s.Value
		if strings.Contains(s.Scope, "key-") || strings.Contains(s.Scope, "/x") || strings.Contains(s.Scope, "/orders/1") {
			t.Errorf("scope attribute %q carries what the client sent", s.Scope)
		}
	}
	// Scopes: 5 methods + _OTHER, alone (outer) and with /orders/{id}
	// (inner); outcomes: locked; statuses: 200, 404, 405.
	if len(streams) > 2*6*3 {
		t.Errorf("%d metric streams after %d requests", len(streams), sent)
	}
	// Each request is counted by the outer middleware, a third of them by
	// the inner one too.
	if total < int64(sent) || total > int64(sent)*3/2 {
		t.Errorf("%d requests counted after %d sent", total, sent)
	}
	other := false
	for _, s := range streams {
		other = other || s.Scope == "_OTHER" || s.Scope == "_OTHER /orders/{id}"
	}
	if !other {
		t.Errorf("no _OTHER scope in %v", streams)
	}
	t.Logf("%d requests, %d streams", sent, len(streams))
}
