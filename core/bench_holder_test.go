package core_test

import (
	"context"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/benchratio"
	"github.com/reqlock/reqlock/memorystore"
)

// A holder label costs nothing measurable when unset and little when set:
// acquire and release on the memory store, plain against labelled.
func BenchmarkHolderLabel(b *testing.B) {
	ctx := context.Background()
	cycles := func(b *testing.B) []benchratio.Cycle {
		cycle := func(l *core.Locker) func() {
			return func() {
				lk, err := l.TryObtain(ctx, "k")
				if err != nil {
					b.Fatal(err)
				}
				if err := lk.Release(ctx); err != nil {
					b.Fatal(err)
				}
			}
		}
		s := memorystore.New()
		return []benchratio.Cycle{
			{Name: "plain", Run: cycle(newLocker(s, core.WithoutWatchdog()))},
			{Name: "holder", Run: cycle(newLocker(s, core.WithoutWatchdog(), core.WithHolder("web-1")))},
		}
	}
	benchratio.Each(b, "", cycles)
	b.Run("ratio", func(b *testing.B) { benchratio.Ratios(b, cycles(b)...) })
}
