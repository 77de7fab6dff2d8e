package backoff_test

import (
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reqlock/reqlock/backoff"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// draw takes n intervals from one fresh BackOff of p.
func draw(p backoff.Policy, n int) []time.Duration {
	b := p()
	out := make([]time.Duration, 0, n)
	for range n {
		out = append(out, b.NextBackOff())
	}
	return out
}

func TestExponentialStaysWithinBounds(t *testing.T) {
	const initial, max = 10 * time.Millisecond, 200 * time.Millisecond
	for range 200 {
		got := draw(backoff.Exponential(initial, max), 30)
		if got[0] < initial/2 || got[0] > initial*3/2+1 {
			t.Fatalf("first interval %v outside [%v, %v]", got[0], initial/2, initial*3/2)
		}
		for i, d := range got {
			if d <= 0 || d > max {
				t.Fatalf("interval %d = %v outside (0, %v]", i, d, max)
			}
		}
		// After enough steps the nominal interval has reached max, so even the
		// low end of the jitter is at least max/2.
		if last := got[len(got)-1]; last < max/2 {
			t.Fatalf("interval never grew: last = %v", last)
		}
	}
}

func TestConstantJitterSpreads(t *testing.T) {
	const d = 100 * time.Millisecond
	seen := map[time.Duration]bool{}
	var lo, hi time.Duration = d, d
	for _, v := range draw(backoff.Constant(d), 1000) {
		if v < d/2 || v > d*3/2+1 {
			t.Fatalf("interval %v outside [%v, %v]", v, d/2, d*3/2)
		}
		seen[v] = true
		lo, hi = min(lo, v), max(hi, v)
	}
	if len(seen) < 900 {
		t.Fatalf("only %d distinct intervals out of 1000: jitter does not spread", len(seen))
	}
	// 1000 uniform draws over [50ms, 150ms] reach within 10 % of both ends.
	if lo > 60*time.Millisecond || hi < 140*time.Millisecond {
		t.Fatalf("jitter covers only [%v, %v] of [50ms, 150ms]", lo, hi)
	}
}

func TestDecorrelatedStaysWithinBounds(t *testing.T) {
	const base, max = 5 * time.Millisecond, 80 * time.Millisecond
	seen := map[time.Duration]bool{}
	for _, v := range draw(backoff.Decorrelated(base, max), 2000) {
		if v < base || v > max {
			t.Fatalf("interval %v outside [%v, %v]", v, base, max)
		}
		seen[v] = true
	}
	if len(seen) < 1000 {
		t.Fatalf("only %d distinct intervals out of 2000", len(seen))
	}
}

func TestLimitStopsAfterRetries(t *testing.T) {
	got := draw(backoff.Limit(backoff.Constant(time.Millisecond), 3), 5)
	for i := range 3 {
		if got[i] == backoff.Stop {
			t.Fatalf("stopped early at %d: %v", i, got)
		}
	}
	if got[3] != backoff.Stop || got[4] != backoff.Stop {
		t.Fatalf("did not stop after 3 retries: %v", got)
	}
	if d := draw(backoff.Limit(backoff.Constant(time.Millisecond), 0), 1)[0]; d != backoff.Stop {
		t.Fatalf("Limit(p, 0) waited %v", d)
	}
}

func TestNoneStops(t *testing.T) {
	if d := draw(backoff.None(), 1)[0]; d != backoff.Stop {
		t.Fatalf("None waited %v", d)
	}
}

// A policy is shared; each caller gets its own schedule. Run under -race.
func TestPolicySharedBetweenGoroutines(t *testing.T) {
	p := backoff.Limit(backoff.Exponential(time.Millisecond, 50*time.Millisecond), 10)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			got := draw(p, 11)
			if got[0] > 2*time.Millisecond {
				t.Errorf("a fresh BackOff started at %v: state leaked between callers", got[0])
			}
			if got[10] != backoff.Stop {
				t.Errorf("retry count leaked between callers: %v", got)
			}
		})
	}
	wg.Wait()
}

func TestInvalidArgumentsPanicClearly(t *testing.T) {
	cases := map[string]func(){
		"Exponential zero":     func() { backoff.Exponential(0, time.Second) },
		"Exponential max<init": func() { backoff.Exponential(time.Second, time.Millisecond) },
		"Constant negative":    func() { backoff.Constant(-time.Second) },
		"Decorrelated zero":    func() { backoff.Decorrelated(time.Millisecond, 0) },
		"Limit negative":       func() { backoff.Limit(backoff.None(), -1) },
		"Limit nil":            func() { backoff.Limit(nil, 1) },
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil {
					t.Fatal("no panic")
				}
			}()
			f()
		})
	}
}
