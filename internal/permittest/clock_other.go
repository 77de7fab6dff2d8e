//go:build !linux

package permittest

import "time"

var origin = time.Now()

// now is this process's monotonic clock in nanoseconds; elsewhere than on
// Linux it is not shared between processes.
func now() int64 { return int64(time.Since(origin)) }

const sharedClock = false
