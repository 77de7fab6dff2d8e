package httplock

import (
	"strconv"
	"time"
)

// retryAfter is the Retry-After value for a busy key: the configured hint,
// but never more than the holder's remaining lease (when known), in whole
// seconds and at least one. The lease alone would be a poor answer: the
// watchdog keeps renewing it, so it always looks close to the full TTL.
func retryAfter(hint, holderTTL time.Duration) time.Duration {
	d := ceilSeconds(hint)
	if holderTTL > 0 {
		d = min(d, ceilSeconds(holderTTL))
	}
	return max(d, time.Second)
}

// ceilSeconds rounds d up to whole seconds.
func ceilSeconds(d time.Duration) time.Duration {
	if r := d % time.Second; r != 0 {
		d += time.Second - r
	}
	return d
}

// formatRetryAfter renders d as RFC 9110 delay-seconds.
func formatRetryAfter(d time.Duration) string {
	return strconv.FormatInt(int64(ceilSeconds(d)/time.Second), 10)
}
