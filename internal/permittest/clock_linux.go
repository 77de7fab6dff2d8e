package permittest

import "golang.org/x/sys/unix"

// now is CLOCK_MONOTONIC in nanoseconds: one clock for every process on
// the machine, so that the events of child instances compare directly.
// (internal/safety and internal/leadtest have the same clock; each keeps
// its own, to import nothing of the other.)
func now() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic("permittest: clock_gettime(CLOCK_MONOTONIC): " + err.Error())
	}
	return ts.Nano()
}

// sharedClock reports whether now agrees across processes.
const sharedClock = true
