//go:build !linux

package safety

import "time"

var origin = time.Now()

// Now is this process's monotonic clock in nanoseconds. Elsewhere than on
// Linux it is not shared between processes (see SharedClock).
func Now() int64 { return int64(time.Since(origin)) }

// SharedClock reports whether Now agrees across processes.
const SharedClock = false
