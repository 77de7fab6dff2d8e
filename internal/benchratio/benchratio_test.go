package benchratio_test

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reqlock/reqlock/internal/benchratio"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// spin busies the goroutine for at least d: unlike time.Sleep, whose
// granularity can be a millisecond, it takes d and little more.
func spin(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// TestMeasure runs Measure inside a real benchmark and checks that each
// cycle ran once per iteration and that the means keep their order.
func TestMeasure(t *testing.T) {
	var short, long int
	var means []float64
	res := testing.Benchmark(func(b *testing.B) {
		short, long = 0, 0
		means = benchratio.Measure(b,
			benchratio.Cycle{Name: "short", Run: func() { short++ }},
			benchratio.Cycle{Name: "long", Run: func() { long++; spin(50 * time.Microsecond) }})
	})
	if short != res.N || long != res.N {
		t.Fatalf("ran %d and %d times, want %d each", short, long, res.N)
	}
	if len(means) != 2 || !(means[0] < means[1]) || means[1] < 50e3 {
		t.Fatalf("means %v: want short < long, long ≥ 50µs", means)
	}
	if _, ok := res.Extra["long-ns"]; !ok {
		t.Fatalf("metrics %v: no long-ns", res.Extra)
	}
}

func TestRatios(t *testing.T) {
	res := testing.Benchmark(func(b *testing.B) {
		benchratio.Ratios(b,
			benchratio.Cycle{Name: "a", Run: func() { spin(10 * time.Microsecond) }},
			benchratio.Cycle{Name: "b", Run: func() {}},
			benchratio.Cycle{Name: "c", Run: func() { spin(500 * time.Microsecond) }})
	})
	for _, m := range []string{"b/a", "c/a", "c/b"} {
		if _, ok := res.Extra[m]; !ok {
			t.Errorf("metrics %v: no %s", res.Extra, m)
		}
	}
	if r := res.Extra["c/a"]; r <= 1 {
		t.Errorf("c/a = %v, want > 1", r)
	}
	if r := res.Extra["b/a"]; r >= 1 {
		t.Errorf("b/a = %v, want < 1", r)
	}
}

// TestEach: every cycle runs as its own sub-benchmark, and only its own
// cycle runs there.
func TestEach(t *testing.T) {
	ran := map[string]int{}
	testing.Benchmark(func(b *testing.B) {
		clear(ran)
		benchratio.Each(b, "x/", func(*testing.B) []benchratio.Cycle {
			return []benchratio.Cycle{
				{Name: "a", Run: func() { ran["a"]++ }},
				{Name: "b", Run: func() { ran["b"]++; spin(time.Microsecond) }},
			}
		})
	})
	if ran["a"] == 0 || ran["b"] == 0 {
		t.Fatalf("runs %v: each cycle should have run", ran)
	}
	if ran["a"] <= ran["b"] {
		t.Fatalf("runs %v: the cheaper cycle should have run more often in its own benchmark", ran)
	}
}
