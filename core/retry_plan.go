package core

import (
	"time"

	cenkalti "github.com/cenkalti/backoff/v4"
)

// plannedWaits is how many of a policy's waits a caller queued behind the
// Locker's other callers of a key draws at a time: it wakes once per that
// many waits to count them, so a policy of any count of waits
// (backoff.Limit) gives up on time, and an endless one costs a wake-up
// now and then.
const plannedWaits = 64

// plan counts the waits of a caller's policy that pass while it is queued
// behind this Locker's other waiters of a key. Queued, the caller makes no
// attempt of its own, so that the first in is the first to ask; but the
// waits it would have made count all the same, so that a policy that gives
// up does so after the caller's own waits, not after everyone's ahead.
type plan struct {
	count cenkalti.BackOff // the policy's waits, drawn as the queue's time passes
	chunk []time.Duration  // the waits drawn last, from chunkAt on
	at    time.Time        // when the waits of chunk start
	drawn int              // waits drawn from count; none was Stop
	stop  bool             // count gave up after drawn waits
	spent int              // waits that passed in the queue
}

func newPlan(b cenkalti.BackOff, now time.Time) *plan {
	return &plan{count: b, at: now, chunk: make([]time.Duration, 0, plannedWaits)}
}

// next draws the next chunk of waits, the ones before spent, and returns
// when they will have passed; false when the policy waits nothing more
// and never gives up (a zero backoff): the queue's time cannot be counted
// in its waits then.
func (p *plan) next() (time.Time, bool) {
	for _, d := range p.chunk {
		p.at = p.at.Add(d)
	}
	p.spent += len(p.chunk)
	p.chunk = p.chunk[:0]
	var sum time.Duration
	for len(p.chunk) < plannedWaits && !p.stop {
		d := p.count.NextBackOff()
		if d < 0 {
			p.stop = true
			break
		}
		p.chunk = append(p.chunk, d)
		p.drawn++
		sum += d
	}
	return p.at.Add(sum), sum > 0 || p.stop
}

// turn counts the waits of the chunk that passed before the caller's turn
// came, at now, and returns the caller's schedule for the rest of its wait:
// the policy's waits from its first, as a fresh BackOff (fresh) says, so
// that the first polls are not late, but only as many as the policy has
// left after the waits spent queued.
func (p *plan) turn(now time.Time, fresh cenkalti.BackOff) cenkalti.BackOff {
	queued := now.Sub(p.at)
	for _, d := range p.chunk {
		if d > queued {
			break
		}
		queued -= d
		p.spent++
	}
	p.chunk = nil
	return &afterTurn{plan: p, fresh: fresh}
}

// afterTurn is a queued caller's schedule once its turn came.
type afterTurn struct {
	*plan
	fresh cenkalti.BackOff
	made  int // waits returned
}

// NextBackOff is fresh's next wait while the policy, counted from the
// waits spent queued, has one left.
func (a *afterTurn) NextBackOff() time.Duration {
	for a.spent+a.made >= a.drawn {
		if a.stop {
			return cenkalti.Stop
		}
		if a.count.NextBackOff() < 0 {
			a.stop = true
			return cenkalti.Stop
		}
		a.drawn++
	}
	a.made++
	return a.fresh.NextBackOff()
}

// Reset is never called: a schedule serves one wait.
func (a *afterTurn) Reset() {}
