package safety

import "golang.org/x/sys/unix"

// Now is CLOCK_MONOTONIC in nanoseconds. On Linux that clock is one for the
// whole machine, so events recorded by different processes compare
// directly; Go's own monotonic reading counts from each process's start and
// would not.
func Now() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic("safety: clock_gettime(CLOCK_MONOTONIC): " + err.Error())
	}
	return ts.Nano()
}

// SharedClock reports whether Now agrees across processes, which the
// scenarios with worker processes need.
const SharedClock = true
