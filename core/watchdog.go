package core

import (
	"context"
	"errors"
	"sync"
	"time"
)

// linger is how long the renewer goroutine outlives the last held lock, so
// that a busy Locker does not start a goroutine for every lock it hands out.
const linger = 50 * time.Millisecond

// watchdog keeps a Locker's locks alive: one goroutine renews all of them,
// batched into one Store.Extend per tick, at about a third of each lease. A
// renewal that fails for a transient reason is retried until the lease would
// have run out by our own monotonic clock; then the lock is lost. Without
// auto-renewal it only marks locks lost when their lease runs out.
//
// Each lock's ttl, validUntil and nextCheck are guarded by mu.
type watchdog struct {
	l    *Locker
	wake chan struct{} // cap 1: the schedule changed

	mu         sync.Mutex
	held       map[*Lock]struct{}
	running    bool
	target     time.Time // when the loop wakes by itself next
	emptySince time.Time
}

func (w *watchdog) init(l *Locker) {
	w.l = l
	w.wake = make(chan struct{}, 1)
	w.held = make(map[*Lock]struct{})
}

// add starts watching lk, whose ttl and validUntil are set; start is when
// it was requested.
func (w *watchdog) add(lk *Lock, start time.Time) {
	lk.nextCheck = w.schedule(lk, start)
	w.mu.Lock()
	w.held[lk] = struct{}{}
	switch {
	case !w.running:
		w.running = true
		go w.loop()
	case lk.nextCheck.Before(w.target):
		w.notify()
	}
	w.mu.Unlock()
}

// remove stops watching lk.
func (w *watchdog) remove(lk *Lock) {
	w.mu.Lock()
	delete(w.held, lk)
	if len(w.held) == 0 {
		now := time.Now()
		w.emptySince = now
		// Have a loop that sleeps until some far renewal exit soon instead.
		if w.running && w.target.After(now.Add(linger)) {
			w.notify()
		}
	}
	w.mu.Unlock()
}

// renewed records a successful extension to ttl that was requested at start.
func (w *watchdog) renewed(lk *Lock, ttl time.Duration, start time.Time, validity time.Duration) {
	w.mu.Lock()
	lk.ttl = ttl
	lk.retrying = false
	lk.validUntil = start.Add(validity)
	lk.nextCheck = w.schedule(lk, start)
	if _, ok := w.held[lk]; ok && w.running && lk.nextCheck.Before(w.target) {
		w.notify()
	}
	w.mu.Unlock()
}

// mayHaveRenewed records an extension to ttl, requested at start, that
// failed without saying whether Redis applied it: a reply lost, a deadline
// hit. If ttl is shorter than the lease we trust, it may have landed and
// cut that lease short, now or later, so we trust no more than it would
// have given and renew with ttl from now on (a renewal to the old ttl could
// be undone by this one landing after it). A longer ttl landing only
// lengthens the lease, which is safe to ignore.
func (w *watchdog) mayHaveRenewed(lk *Lock, ttl time.Duration, start time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ttl >= lk.ttl {
		return
	}
	lk.ttl = ttl
	if until := start.Add(validity(ttl)); until.Before(lk.validUntil) {
		lk.validUntil = until
		lk.nextCheck = w.schedule(lk, start)
		if _, ok := w.held[lk]; ok && w.running && lk.nextCheck.Before(w.target) {
			w.notify()
		}
	}
}

// lose marks lk lost, stops watching it and says so in the log.
func (w *watchdog) lose(lk *Lock, why string) {
	if !lk.markLost() {
		return
	}
	w.remove(lk)
	w.l.log.Warn("reqlock: lock lost", "key", lk.skey, "fence", lk.fence, "reason", why)
}

// schedule is when the watchdog next looks at lk: after a third of its
// validity to renew it, or at its end to declare it lost.
func (w *watchdog) schedule(lk *Lock, start time.Time) time.Time {
	if !w.l.autoRenew {
		return lk.validUntil
	}
	return start.Add(lk.validUntil.Sub(start) / 3)
}

// slack lets a lock that is due soon ride along with one due now, so that
// locks taken a moment apart are renewed in one batch: renewing at a sixth
// of the lease instead of a third costs nothing.
func (w *watchdog) slack(lk *Lock) time.Duration {
	if !w.l.autoRenew || lk.retrying {
		return 0
	}
	return lk.ttl / 6
}

// notify wakes the loop; the caller holds mu.
func (w *watchdog) notify() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *watchdog) loop() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		var due, expired []*Lock
		w.mu.Lock()
		if len(w.held) == 0 && now.Sub(w.emptySince) >= linger {
			w.running = false
			w.mu.Unlock()
			return
		}
		next := now.Add(time.Hour)
		if len(w.held) == 0 {
			next = w.emptySince.Add(linger)
		}
		for lk := range w.held {
			switch {
			case !now.Before(lk.validUntil):
				expired = append(expired, lk)
			case !now.Add(w.slack(lk)).Before(lk.nextCheck):
				due = append(due, lk)
			case lk.nextCheck.Before(next):
				next = lk.nextCheck
			}
		}
		w.target = next
		if len(due)+len(expired) > 0 {
			w.target = now // busy: the loop looks again right after
		}
		w.mu.Unlock()

		for _, lk := range expired {
			w.lose(lk, "lease ran out before it could be renewed")
		}
		if len(due) > 0 {
			w.renew(due)
		}
		if len(due)+len(expired) > 0 {
			continue
		}
		timer.Reset(next.Sub(now))
		select {
		case <-timer.C:
		case <-w.wake:
		}
	}
}

// renew extends every due lock in one Store.Extend. The call is bounded by
// the shortest remaining validity of every lock held, not only the due
// ones: while it runs this goroutine checks nothing else, and a lock whose
// lease ends meanwhile must be declared lost on time.
//
// A lock whose Refresh is under way is left out: two extends of one lock in
// flight could land in either order and leave us trusting the wrong lease.
func (w *watchdog) renew(due []*Lock) {
	var mine, busy []*Lock
	for _, lk := range due {
		if lk.extending.TryLock() {
			mine = append(mine, lk)
		} else {
			busy = append(busy, lk)
		}
	}
	if len(busy) > 0 { // look again shortly; the Refresh reschedules them anyway
		later := time.Now().Add(time.Millisecond)
		w.mu.Lock()
		for _, lk := range busy {
			lk.nextCheck, lk.retrying = later, true // retrying: no slack, so not due at once
		}
		w.mu.Unlock()
	}
	defer func() {
		for _, lk := range mine {
			lk.extending.Unlock()
		}
	}()
	if len(mine) == 0 {
		return
	}

	leases := make([]Lease, len(mine))
	now := time.Now()
	budget := time.Hour
	w.mu.Lock()
	for i, lk := range mine {
		leases[i] = Lease{Key: lk.skey, Token: lk.token, TTL: lk.ttl}
	}
	for lk := range w.held {
		budget = min(budget, lk.validUntil.Sub(now))
	}
	w.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), max(budget, time.Millisecond))
	defer cancel()

	start := time.Now()
	results := w.l.store.Extend(ctx, leases)
	for i, lk := range mine {
		r := results[i]
		switch {
		case r.Err == nil:
			w.renewed(lk, leases[i].TTL, start, r.Validity)
		case errors.Is(r.Err, ErrNotHeld):
			w.lose(lk, "renewal found the lock gone: expired, deleted or taken")
		default:
			w.retrySoon(lk, r.Err)
		}
	}
}

// retrySoon schedules another renewal of lk after a transient failure, no
// later than the end of its validity.
func (w *watchdog) retrySoon(lk *Lock, err error) {
	now := time.Now()
	w.mu.Lock()
	gap := max(lk.ttl/10, 5*time.Millisecond)
	lk.retrying = true // no slack: retry at the gap, not at once
	lk.nextCheck = now.Add(gap)
	if lk.nextCheck.After(lk.validUntil) {
		lk.nextCheck = lk.validUntil
	}
	left := lk.validUntil.Sub(now)
	w.mu.Unlock()
	w.l.log.Debug("reqlock: renewal failed, retrying", "key", lk.skey, "lease_left", left, "error", err)
}
