package backoff

import (
	"fmt"
	"math/rand/v2"
	"time"

	cenkalti "github.com/cenkalti/backoff/v4"
)

// Stop is what NextBackOff returns when a policy gives up.
const Stop = cenkalti.Stop

// jitter is how far a randomized interval may stray from its nominal value
// (±50 %): wide enough to break up a herd, narrow enough to stay predictable.
const jitter = 0.5

// Policy makes a fresh BackOff for each wait. It must be safe to call from
// many goroutines at once; the BackOff it returns is used by one goroutine.
type Policy func() cenkalti.BackOff

// Exponential waits about initial, then grows the interval by half each time
// up to max. Each interval is randomized by ±50 % and never exceeds max.
// It never gives up on its own: the caller's context bounds the wait.
func Exponential(initial, max time.Duration) Policy {
	mustBePositive("Exponential", "initial", initial)
	mustBePositive("Exponential", "max", max)
	if max < initial {
		panic(fmt.Sprintf("reqlock/backoff: Exponential: max (%v) is below initial (%v)", max, initial))
	}
	return func() cenkalti.BackOff {
		b := &cenkalti.ExponentialBackOff{
			InitialInterval:     initial,
			RandomizationFactor: jitter,
			Multiplier:          1.5,
			MaxInterval:         max,
			Stop:                Stop,
			Clock:               cenkalti.SystemClock,
		}
		b.Reset()
		return capped{b, max}
	}
}

// Constant waits d ±50 % every time.
func Constant(d time.Duration) Policy {
	mustBePositive("Constant", "d", d)
	return func() cenkalti.BackOff {
		b := &cenkalti.ExponentialBackOff{
			InitialInterval:     d,
			RandomizationFactor: jitter,
			Multiplier:          1,
			MaxInterval:         d,
			Stop:                Stop,
			Clock:               cenkalti.SystemClock,
		}
		b.Reset()
		return b
	}
}

// Decorrelated is the "decorrelated jitter" schedule: each wait is drawn
// uniformly from [base, 3×previous], capped at max. It spreads contending
// waiters further apart than plain exponential jitter does.
func Decorrelated(base, max time.Duration) Policy {
	mustBePositive("Decorrelated", "base", base)
	mustBePositive("Decorrelated", "max", max)
	if max < base {
		panic(fmt.Sprintf("reqlock/backoff: Decorrelated: max (%v) is below base (%v)", max, base))
	}
	return func() cenkalti.BackOff {
		return &decorrelated{base: base, max: max, prev: base}
	}
}

// Limit gives up after retries waits of p. Limit(p, 0) never waits.
func Limit(p Policy, retries int) Policy {
	if p == nil {
		panic("reqlock/backoff: Limit: nil policy")
	}
	if retries < 0 {
		panic(fmt.Sprintf("reqlock/backoff: Limit: negative retries (%d)", retries))
	}
	return func() cenkalti.BackOff {
		return cenkalti.WithMaxRetries(p(), uint64(retries))
	}
}

// None never waits: Obtain with None behaves like TryObtain.
func None() Policy {
	return func() cenkalti.BackOff { return &cenkalti.StopBackOff{} }
}

func mustBePositive(fn, name string, d time.Duration) {
	if d <= 0 {
		panic(fmt.Sprintf("reqlock/backoff: %s: %s must be positive, got %v", fn, name, d))
	}
}

// capped keeps a randomized interval from overshooting the policy's max,
// which cenkalti's ExponentialBackOff allows by up to the jitter.
type capped struct {
	cenkalti.BackOff
	max time.Duration
}

func (c capped) NextBackOff() time.Duration {
	d := c.BackOff.NextBackOff()
	if d != Stop && d > c.max {
		return c.max
	}
	return d
}

type decorrelated struct {
	base, max, prev time.Duration
}

func (d *decorrelated) Reset() { d.prev = d.base }

func (d *decorrelated) NextBackOff() time.Duration {
	hi := d.prev * 3
	if hi > d.max || hi <= 0 { // hi <= 0: overflow
		hi = d.max
	}
	next := d.base
	if hi > d.base {
		next += rand.N(hi - d.base + 1)
	}
	d.prev = next
	return next
}
