package node

import (
	"strconv"
	"sync/atomic"
	"time"
)

// A fence is the larger of the last one + 1 and the server's clock in µs,
// so that it grows also when the counter is lost (see acquire_lean.lua).
// Asking the server for its clock (TIME) on every acquire costs a call in
// every script. So an acquire sent without a clock has the script read it
// and send it back with the fence; the Node keeps that reading, and for a
// while sends the server's clock as it reckons it from there: the time
// read, plus what this process's monotonic clock counted since the acquire
// was sent. That errs ahead, by up to a round trip, never behind: a fence a
// little ahead of the server's clock still grows.

// clockResample is how long one reading of the server's clock serves. A
// server whose clock steps, or a failover to another server, is seen at
// most this late.
const clockResample = time.Second

// clockSample is the server's clock as one acquire read it.
type clockSample struct {
	sent   time.Time // when the acquire was sent, with its monotonic reading
	micros int64     // the server's clock the script read, in µs
}

// serverClock reckons the server's clock from its last reading.
type serverClock struct {
	last atomic.Pointer[clockSample]
}

// now is the server's clock in µs, formatted for a script; nil when the
// last reading is too old: then the script reads the server's (TIME) and
// sends it back (see read).
func (c *serverClock) now() any {
	now := time.Now()
	smp := c.last.Load()
	if smp == nil || !fresh(smp, now) {
		return nil
	}
	return strconv.FormatInt(smp.micros+now.Sub(smp.sent).Microseconds(), 10)
}

// read keeps the server's clock in µs that an acquire sent at sent read.
func (c *serverClock) read(sent time.Time, micros int64) {
	c.last.Store(&clockSample{sent: sent, micros: micros})
}

// fresh reports whether smp still serves at now: by the monotonic clock
// and by the wall clock alike, since the monotonic one stands still while
// the machine sleeps.
func fresh(smp *clockSample, now time.Time) bool {
	mono := now.Sub(smp.sent)
	wall := now.Round(0).Sub(smp.sent.Round(0))
	return mono >= 0 && mono < clockResample && wall >= 0 && wall < clockResample
}
