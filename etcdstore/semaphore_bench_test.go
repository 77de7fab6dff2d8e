package etcdstore_test

import (
	"context"
	"testing"

	"github.com/reqlock/reqlock/internal/benchratio"
	"github.com/reqlock/reqlock/internal/etcdtest"
)

// BenchmarkPermitCycle is one uncontended permit (limit 3) taken and given
// back, beside a lock's cycle on the same Locker, interleaved in one run:
// what a permit costs over a lock. No bar: reported.
func BenchmarkPermitCycle(b *testing.B) {
	c := etcdtest.Start(b)
	l := benchLocker(b, c.Client(b))
	sem := l.Semaphore(3)
	ctx := context.Background()
	b.ReportAllocs()
	benchratio.Ratios(b,
		benchratio.Cycle{Name: "lock", Run: func() {
			lk, err := l.TryObtain(ctx, "bench-lock")
			if err != nil {
				b.Fatal(err)
			}
			if err := lk.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}},
		benchratio.Cycle{Name: "permit", Run: func() {
			lk, err := sem.TryObtain(ctx, "bench-permit")
			if err != nil {
				b.Fatal(err)
			}
			if err := lk.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}},
	)
}
