package fiberlock_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/gofiber/fiber/v3"
	"github.com/valyala/fasthttp"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/fiberlock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/benchratio"
	"github.com/reqlock/reqlock/internal/httpcases"
)

// benchApp is the benchmark route, POST /orders/:id keyed by the user the
// stand-in auth puts in Locals, with the middleware in front when locked.
func benchApp(l *core.Locker, locked bool) fasthttp.RequestHandler {
	app := fiber.New()
	app.Use(auth)
	chain := []any{func(c fiber.Ctx) error { return c.SendStatus(http.StatusOK) }}
	if locked {
		chain = append([]any{fiberlock.New(httplock.Config{Locker: l, Key: fiberlock.FromLocals(httpcases.UserKey)})}, chain...)
	}
	app.Post(httpcases.ColonPath(httpcases.BenchPath), chain[0], chain[1:]...)
	return app.Handler()
}

// BenchmarkMiddleware measures, on each store and in one run, a request
// through fiberlock ("locked"), the same app without it ("bare") and the
// core lock cycle TryObtain + Release ("core-cycle"), the floor. "ratio"
// interleaves the three and reports the middleware's overhead (locked −
// bare) over the core cycle; the bar is 1.25, as for the other adapters.
// Requests are served in-process, on fasthttp's own request type.
func BenchmarkMiddleware(b *testing.B) {
	for _, st := range httpcases.Stores {
		if st.NoBench {
			continue
		}
		b.Run(st.Name, func(b *testing.B) {
			be := st.Open(b)
			l := core.NewLocker(be.Store, core.WithLogger(httpcases.Quiet))
			bare, locked := benchApp(l, false), benchApp(l, true)
			ctx := context.Background()
			key := httplock.LockKey("POST "+httpcases.ColonPath(httpcases.BenchPath), "alice")
			cycle := func() {
				lk, err := l.TryObtain(ctx, key)
				if err != nil {
					b.Fatal(err)
				}
				if err := lk.Release(ctx); err != nil {
					b.Fatal(err)
				}
			}
			var rc fasthttp.RequestCtx
			serve := func(h fasthttp.RequestHandler) {
				var req fasthttp.Request
				req.Header.SetMethod("POST")
				req.SetRequestURI("/orders/42")
				req.Header.Set(httpcases.UserHeader, "alice")
				rc.Init(&req, nil, nil)
				h(&rc)
				if rc.Response.StatusCode() != http.StatusOK {
					b.Fatalf("status %d: %s", rc.Response.StatusCode(), rc.Response.Body())
				}
			}
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
