package httpcases

import (
	"context"
	"net/http"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/benchratio"
)

// LimitBuild returns a framework's router for the benchmark route, with the
// stand-in auth middleware and the reqlock middleware over l with
// Config.Limit set to limit. The handler answers 200 with no body.
type LimitBuild func(l *core.Locker, limit int) http.Handler

// BenchLimit measures, on each store in Stores and in one run, a request
// through a route with Limit 3 ("limit3": the request takes and gives back
// a permit of its key's semaphore) against the same route with Limit 1
// ("limit1": the key's lock, the floor). "ratio" interleaves the two and
// reports limit3/limit1; the bar is 1.10. "ratio-layers" times the same
// loop with the core cycles of a lock and of a permit beside it:
// core-permit/core-lock is what the store's permit costs over its lock,
// and route-extra-ns what the route adds beyond that difference (about 0:
// the engine's flow is the same). The others are the same cycles one after
// another, with allocations.
func BenchLimit(b *testing.B, build LimitBuild) {
	for _, st := range Stores {
		if st.NoBench {
			continue
		}
		b.Run(st.Name, func(b *testing.B) {
			be := st.Open(b)
			l := core.NewLocker(be.Store, core.WithLogger(Quiet))
			one, three := build(l, 1), build(l, 3)
			cycles := func(b *testing.B) []benchratio.Cycle {
				return []benchratio.Cycle{
					{Name: "limit1", Run: func() { serveBench(b, one) }},
					{Name: "limit3", Run: func() { serveBench(b, three) }},
				}
			}
			benchratio.Each(b, "", cycles)
			b.Run("ratio", func(b *testing.B) { benchratio.Ratios(b, cycles(b)...) })
			// The layers: the same loop with the core cycles beside it, a
			// lock's and a permit's (TryObtain + Release), to tell what the
			// store's permit costs from what the route adds to it.
			sem := l.Semaphore(3)
			key := httplock.LockKey("POST "+BenchPath, "alice")
			coreCycle := func(b *testing.B, obtain func(context.Context, string) (*core.Lock, error)) func() {
				return func() {
					lk, err := obtain(context.Background(), key)
					if err != nil {
						b.Fatal(err)
					}
					if err := lk.Release(context.Background()); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.Run("ratio-layers", func(b *testing.B) {
				ns := benchratio.Measure(b, append(cycles(b),
					benchratio.Cycle{Name: "core-lock", Run: coreCycle(b, l.TryObtain)},
					benchratio.Cycle{Name: "core-permit", Run: coreCycle(b, sem.TryObtain)})...)
				limit1, limit3, lock, permit := ns[0], ns[1], ns[2], ns[3]
				b.ReportMetric(permit/lock, "core-permit/core-lock")
				b.ReportMetric((limit3-limit1)-(permit-lock), "route-extra-ns")
			})
		})
	}
}
