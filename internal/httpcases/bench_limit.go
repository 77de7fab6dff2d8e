package httpcases

import (
	"net/http"
	"testing"

	"github.com/reqlock/reqlock/core"
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
// reports limit3/limit1; the bar is 1.10. The others are the same cycles
// one after another, with allocations.
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
		})
	}
}
