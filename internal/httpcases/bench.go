package httpcases

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/benchratio"
)

// BenchRoute is the route every benchmark router serves: POST BenchPath,
// keyed by the user the stand-in auth middleware puts on the context.
const (
	BenchPath = "/orders/{id}"
	benchURL  = "/orders/42"
)

// Build returns a framework's router for the benchmark route, with the
// stand-in auth middleware, and with the reqlock middleware over l in front
// of the handler when locked is true. The handler answers 200 with no body.
type Build func(l *core.Locker, locked bool) http.Handler

// Bench measures, on each store in Stores and in one run, a request through
// the framework's middleware ("locked"), the same router without it
// ("bare"), and the core lock cycle TryObtain + Release ("core-cycle"), the
// floor the middleware is judged against. "ratio" interleaves all three and
// reports the middleware's overhead (locked − bare) over the core cycle; the
// bar is 1.25. Requests are served in-process so that network noise does not
// drown the difference.
func Bench(b *testing.B, build Build) {
	for _, st := range Stores {
		if st.NoBench {
			continue
		}
		b.Run(st.Name, func(b *testing.B) {
			be := st.Open(b)
			l := core.NewLocker(be.Store, core.WithLogger(Quiet))
			bare, locked := build(l, false), build(l, true)
			ctx := context.Background()
			key := httplock.LockKey("POST "+BenchPath, "alice")
			cycle := func() {
				lk, err := l.TryObtain(ctx, key)
				if err != nil {
					b.Fatal(err)
				}
				if err := lk.Release(ctx); err != nil {
					b.Fatal(err)
				}
			}
			serve := func(h http.Handler) { serveBench(b, h) }
			b.Run("core-cycle", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					cycle()
				}
			})
			b.Run("bare", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					serve(bare)
				}
			})
			b.Run("locked", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					serve(locked)
				}
			})
			b.Run("ratio", func(b *testing.B) {
				ns := benchratio.Measure(b,
					benchratio.Cycle{Name: "cycle", Run: cycle},
					benchratio.Cycle{Name: "bare", Run: func() { serve(bare) }},
					benchratio.Cycle{Name: "locked", Run: func() { serve(locked) }})
				b.ReportMetric((ns[2]-ns[1])/ns[0], "overhead/cycle")
			})
		})
	}
}

// serveBench serves alice's request to the benchmark route through h, in
// process, and fails b unless it is answered 200.
func serveBench(b *testing.B, h http.Handler) {
	r := httptest.NewRequest("POST", benchURL, nil)
	r.Header.Set(UserHeader, "alice")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		b.Fatalf("status %d: %s", w.Code, w.Body)
	}
}
