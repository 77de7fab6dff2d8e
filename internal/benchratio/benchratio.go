// Package benchratio times several cycles in one interleaved loop, so that
// a figure can be read as a ratio to its floor even on a machine whose speed
// drifts: each iteration runs every cycle once, in turn, and the drift falls
// on all of them alike instead of on whichever ran during a slow spell.
package benchratio

import (
	"testing"
	"time"
)

// Cycle is one thing to time: a floor, or what is read against it.
type Cycle struct {
	Name string // metric-friendly: no spaces
	Run  func()
}

// Measure runs every cycle once per iteration of b's loop and reports each
// one's mean as "<name>-ns". It returns the means in nanoseconds, in the
// order given, for the caller's ratios.
func Measure(b *testing.B, cycles ...Cycle) []float64 {
	spent := make([]time.Duration, len(cycles))
	for b.Loop() {
		for i, c := range cycles {
			start := time.Now()
			c.Run()
			spent[i] += time.Since(start)
		}
	}
	means := make([]float64, len(cycles))
	for i, c := range cycles {
		means[i] = float64(spent[i]) / float64(b.N)
		b.ReportMetric(means[i], c.Name+"-ns")
	}
	return means
}

// Ratios measures the cycles as Measure does and reports, for every cycle
// after the first, its mean over each earlier one's as "<name>/<name>".
func Ratios(b *testing.B, cycles ...Cycle) {
	means := Measure(b, cycles...)
	for j := 1; j < len(cycles); j++ {
		for i := range j {
			b.ReportMetric(means[j]/means[i], cycles[j].Name+"/"+cycles[i].Name)
		}
	}
}

// Each runs every cycle as a sub-benchmark of its own, named prefix + its
// name, with allocations reported: the same cycles one after another, for
// ns/op and allocs/op beside the interleaved figures. cycles is called in
// each sub-benchmark, so that the cycles it returns fail that one.
func Each(b *testing.B, prefix string, cycles func(*testing.B) []Cycle) {
	for i, c := range cycles(b) {
		b.Run(prefix+c.Name, func(b *testing.B) {
			run := cycles(b)[i].Run
			b.ReportAllocs()
			for b.Loop() {
				run()
			}
		})
	}
}
