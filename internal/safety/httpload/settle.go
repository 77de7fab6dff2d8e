package httpload

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"
)

// Snapshot is the process's goroutines (but the fault proxy's) and live
// heap.
type Snapshot struct {
	Goroutines int
	Heap       uint64 // HeapAlloc after two GCs
}

// Take collects garbage and reads the process's goroutines and heap.
func Take() Snapshot {
	runtime.GC()
	runtime.GC() // the first GC's finalizers free more
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return Snapshot{Goroutines: runtime.NumGoroutine() - harness(), Heap: m.HeapAlloc}
}

// harness counts the goroutines of the fault proxy, which are not the
// code under test: four for each connection a Redis client keeps open
// through it, as many as the client's pool holds.
func harness() int {
	var b bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
	n := 0
	_, text, _ := strings.Cut(b.String(), "\n") // past "goroutine profile: total n"
	for _, block := range strings.Split(text, "\n\n") {
		var count int
		if _, err := fmt.Sscanf(block, "%d @", &count); err == nil && strings.Contains(block, "/core/storetest/faultproxy.") {
			n += count
		}
	}
	return n
}

// Settle waits, up to within, for the goroutines and heap to come back to
// base plus the tolerances, and returns the last snapshot and whether they
// did. Connections closing, timers firing and a Lock's background work
// ending all take a moment after a run.
func Settle(base Snapshot, goroutines int, heap uint64, within time.Duration) (Snapshot, bool) {
	deadline := time.Now().Add(within)
	for {
		s := Take()
		if s.Goroutines <= base.Goroutines+goroutines && s.Heap <= base.Heap+heap {
			return s, true
		}
		if time.Now().After(deadline) {
			return s, false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Growth describes the change from base to s.
func Growth(base, s Snapshot) string {
	return fmt.Sprintf("goroutines %d→%d, heap %s→%s", base.Goroutines, s.Goroutines, MiB(int64(base.Heap)), MiB(int64(s.Heap)))
}

// MiB renders n bytes in MiB with one decimal.
func MiB(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// Goroutines is a dump of every goroutine's stack, alike ones counted
// together: what to look at when Settle says they did not come back.
func Goroutines() string {
	var b bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
	return b.String()
}
