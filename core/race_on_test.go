//go:build race

package core_test

// raceEnabled: the race detector's instrumentation allocates on its own, so
// allocation counts are only asserted without it.
const raceEnabled = true
