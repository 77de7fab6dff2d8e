package leadtest

import "golang.org/x/sys/unix"

// now is CLOCK_MONOTONIC in nanoseconds: one clock for every process on
// the machine, so that the events of child instances compare directly.
// (internal/safety has the same clock; it imports this package, so this
// one cannot import it.)
func now() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic("leadtest: clock_gettime(CLOCK_MONOTONIC): " + err.Error())
	}
	return ts.Nano()
}

// sharedClock reports whether now agrees across processes.
const sharedClock = true
