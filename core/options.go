package core

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/reqlock/reqlock/backoff"
)

// Defaults for a Locker built without options.
const (
	// DefaultTTL is the lease. The watchdog renews it while the lock is held,
	// so it only bounds how long a crashed holder blocks others.
	DefaultTTL = 10 * time.Second
	// DefaultPrefix namespaces every key a Locker writes.
	DefaultPrefix = "reqlock:"
	// MinTTL is the shortest lease a Locker accepts: below it the network
	// round trip eats the lease.
	MinTTL = 10 * time.Millisecond
)

// DefaultRetry is how Obtain waits between attempts unless told otherwise
// (WithRetry). On a store that wakes waiters (every store this module
// ships), a Locker without WithRetry also waits at least about
// store.HandOffTimeout between polls: a release wakes its waiter at once,
// so polling only finds a holder whose lease ran out, and need not be
// eager.
var DefaultRetry = backoff.Exponential(10*time.Millisecond, 500*time.Millisecond)

// Option configures a Locker.
type Option func(*Locker)

// WithTTL sets the lease (default 10s, at least MinTTL, rounded down to whole
// milliseconds). The watchdog renews it at about a third of its length.
func WithTTL(d time.Duration) Option {
	mustValidTTL("WithTTL", d)
	return func(l *Locker) { l.ttl = d.Truncate(time.Millisecond) }
}

// WithRetry sets how Obtain waits between attempts (default DefaultRetry).
// The policy is the schedule, on every store: each wait ends when p says,
// or sooner when a release wakes the waiter, never later; a policy that
// gives up (backoff.Limit, backoff.None) ends Obtain with ErrNotObtained
// after its count of waits, and a waiter that stood in the store's line
// leaves it then. Time spent queued behind the Locker's other callers of
// the same key counts as the policy's waits, and the queue keeps its
// order. Waiting also ends with Obtain's context, and never sleeps past
// the holder's remaining lease.
func WithRetry(p backoff.Policy) Option {
	if p == nil {
		panic("reqlock: WithRetry: nil policy")
	}
	return func(l *Locker) { l.retry, l.retrySet = p, true }
}

// WithAttemptTimeout bounds each acquire round trip to the store, so that
// Obtain with a long (or no) deadline notices a hung store within d and
// returns ErrUnavailable instead of waiting it out. The default, 0, leaves
// the bound to the caller's context. ContextWithAttemptTimeout overrides it
// per call.
func WithAttemptTimeout(d time.Duration) Option {
	if d < 0 {
		panic(fmt.Sprintf("reqlock: WithAttemptTimeout: negative timeout %v", d))
	}
	return func(l *Locker) { l.perTry = d }
}

// WithoutWatchdog turns automatic renewal off: a lock then lasts its TTL
// unless Refresh extends it, and Lost fires when the TTL runs out.
func WithoutWatchdog() Option {
	return func(l *Locker) { l.autoRenew = false }
}

// WithPrefix sets the namespace of every key the Locker writes (default
// "reqlock:"). It must not contain '{' or '}', which would move the hash tag.
func WithPrefix(p string) Option {
	if !validPrefix(p) {
		panic(fmt.Sprintf("reqlock: WithPrefix: %q contains '{' or '}', which would break the key's hash tag", p))
	}
	return func(l *Locker) { l.prefix = p }
}

// WithLogger sets where the Locker reports lost locks (Error), retried
// renewals (Debug) and background releases that gave up (Warn), with the
// attributes listed under WithTelemetry (default slog.Default()).
func WithLogger(lg *slog.Logger) Option {
	if lg == nil {
		panic("reqlock: WithLogger: nil logger")
	}
	return func(l *Locker) { l.log = lg }
}

func mustValidTTL(fn string, d time.Duration) {
	if d < MinTTL {
		panic(fmt.Sprintf("reqlock: %s: TTL %v is below the minimum %v", fn, d, MinTTL))
	}
}
