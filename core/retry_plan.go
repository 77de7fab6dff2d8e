package core

import (
	"time"

	cenkalti "github.com/cenkalti/backoff/v4"
)

// plannedWaits is how many of a policy's waits are drawn ahead for a caller
// queued behind the Locker's other callers of a key: a policy that stops
// within them (backoff.Limit, backoff.None) bounds the time it queues.
const plannedWaits = 64

// plan is a caller's schedule drawn ahead of its turn to poll the store.
// A caller queued behind this Locker's other waiters of the key makes no
// attempt of its own, so that the first in is the first to ask; but the
// waits it would have made count all the same, so that a policy that gives
// up does so after the caller's own waits, not after everyone's ahead.
type plan struct {
	waits  []time.Duration
	finite bool             // the policy stops after waits
	rest   cenkalti.BackOff // the policy past waits, when not finite
}

func planOf(b cenkalti.BackOff) *plan {
	p := &plan{rest: b}
	for range plannedWaits {
		d := b.NextBackOff()
		if d < 0 {
			p.finite = true
			break
		}
		p.waits = append(p.waits, d)
	}
	return p
}

// budget is how long the caller may queue before its policy gives up;
// false when the policy never does.
func (p *plan) budget() (time.Duration, bool) {
	if !p.finite {
		return 0, false
	}
	var sum time.Duration
	for _, d := range p.waits {
		sum += d
	}
	return sum, true
}

// spend drops the waits of a finite plan that the caller spent queued.
// An endless policy starts afresh at the turn: its waits may grow, and
// the time queued must not make its first polls late.
func (p *plan) spend(queued time.Duration) {
	if !p.finite {
		return
	}
	for len(p.waits) > 0 && p.waits[0] <= queued {
		queued -= p.waits[0]
		p.waits = p.waits[1:]
	}
}

// NextBackOff makes a plan the cenkalti.BackOff of the rest of the wait.
func (p *plan) NextBackOff() time.Duration {
	if len(p.waits) > 0 {
		d := p.waits[0]
		p.waits = p.waits[1:]
		return d
	}
	if p.finite {
		return cenkalti.Stop
	}
	return p.rest.NextBackOff()
}

// Reset is never called: a plan serves one wait.
func (p *plan) Reset() {}
