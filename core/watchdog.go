package core

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/reqlock/reqlock/core/store"
)

// linger is how long the renewer goroutine outlives the last held lock, so
// that a busy Locker does not start a goroutine for every lock it hands out.
const linger = 50 * time.Millisecond

// watchdog keeps a Locker's locks alive: one goroutine watches all of them,
// and renews the due ones, batched into one Store.Extend, at about a third
// of each lease. A renewal that fails for a transient reason is retried
// until the lease would have run out by our own monotonic clock; then the
// lock is lost. Without auto-renewal it only marks locks lost when their
// lease runs out.
//
// The round trips run off the watching goroutine, so that each lock is
// declared lost by its own deadline whatever another lock's renewal is
// waiting for (a paused Cluster master, a slow link).
//
// Each lock's ttl, validUntil, nextCheck, retrying and renewing are guarded
// by mu.
type watchdog struct {
	l    *Locker
	wake chan struct{} // cap 1: the schedule changed

	mu         sync.Mutex
	held       map[*Lock]struct{}
	running    bool
	target     time.Time // when the loop wakes by itself next
	emptySince time.Time
	turns      int           // times the loop looked at the locks, for tests
	rtt        time.Duration // the last store round trip that succeeded
}

// roundTrip records how long a store round trip that succeeded took.
func (w *watchdog) roundTrip(d time.Duration) {
	w.mu.Lock()
	w.rtt = d
	w.mu.Unlock()
}

// lastRoundTrip is the last store round trip that succeeded; 0 if none.
func (w *watchdog) lastRoundTrip() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rtt
}

// extending records that an extend of lk to ttl starts now, and returns
// now: whatever its outcome, the lease in the store may reach ttl from now.
func (w *watchdog) extending(lk *Lock, ttl time.Duration) time.Time {
	now := time.Now()
	w.mu.Lock()
	if until := now.Add(ttl); until.After(lk.reach) {
		lk.reach = until
	}
	w.mu.Unlock()
	return now
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

// remove stops watching lk and returns how far its lease in the store may
// run, for a release that must be retried.
func (w *watchdog) remove(lk *Lock) (reach time.Time) {
	if lk.lapse != nil {
		lk.lapse.unbind()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.held, lk)
	if len(w.held) == 0 {
		now := time.Now()
		w.emptySince = now
		// Have a loop that sleeps until some far renewal exit soon instead.
		if w.running && w.target.After(now.Add(linger)) {
			w.notify()
		}
	}
	return lk.reach
}

// renewed records a successful extension to ttl that was requested at
// start, and reports whether lk is still watched: false when it was lost
// or released while the extension was on its way.
//
// The lease in the store only grows (extend.lua), so what we trusted before
// still holds: a Refresh to a shorter ttl shortens the renewals to come,
// not the trust already earned.
func (w *watchdog) renewed(lk *Lock, ttl time.Duration, start time.Time, validity time.Duration) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	lk.renewing = false
	if _, ok := w.held[lk]; !ok {
		return false
	}
	lk.ttl = ttl
	lk.retrying = false
	if until := start.Add(validity); until.After(lk.validUntil) {
		lk.validUntil = until
	}
	lk.nextCheck = w.schedule(lk, start)
	if w.running && lk.nextCheck.Before(w.target) {
		w.notify()
	}
	return true
}

// lose marks lk lost, stops watching it and says so in the log.
func (w *watchdog) lose(lk *Lock, reason lossReason) {
	if w.markLost(lk, reason) {
		w.logLost([]*Lock{lk}, reason)
	}
}

// lapsed marks lk lost because its lease ran out and the memory store gave
// the key to another or dropped it (see lapseTarget), as the loop does when
// it finds the lease over; the log line goes out off the caller's path,
// which is the next holder's acquire.
func (w *watchdog) lapsed(lk *Lock) {
	if lk.markLost() {
		w.afterLapse(lk)
	}
}

// afterLapse is the rest of a loss by lapse once lk is marked lost, which
// the memory store does under its mutex (see lapseTarget.fire).
func (w *watchdog) afterLapse(lk *Lock) {
	w.forget(lk, lostExpired)
	go w.logLost([]*Lock{lk}, lostExpired)
}

// markLost marks lk lost and stops watching it; it reports whether this
// call did it.
func (w *watchdog) markLost(lk *Lock, reason lossReason) bool {
	if !lk.markLost() {
		return false
	}
	w.forget(lk, reason)
	return true
}

// forget stops watching lk, marked lost, and counts the loss.
func (w *watchdog) forget(lk *Lock, reason lossReason) {
	w.remove(lk)
	if lk.tel != nil {
		w.l.telemetry.lockLost(lk, reason)
	}
}

// logLost says at Error level that locks were lost: whatever they guarded
// may now run twice.
func (w *watchdog) logLost(lost []*Lock, reason lossReason) {
	for _, lk := range lost {
		w.l.log.Error("reqlock: lock lost", logStoreKey, lk.skey, attrFence, lk.fence, attrReason, reason.String())
	}
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
// of the lease instead of a third costs nothing. A lock whose validity is
// shorter than its lease (one handed over by a release, see
// Locker.handedOver) is given as much slack by that validity: a short hold
// of it ends before any renewal.
func (w *watchdog) slack(lk *Lock) time.Duration {
	if !w.l.autoRenew || lk.retrying {
		return 0
	}
	return min(lk.ttl/6, lk.validUntil.Sub(lk.nextCheck)/4)
}

// renewBatch is the most locks one renewal round trip carries.
const renewBatch = 1000

// retryGap is how long after a failed renewal the next one goes, unless
// the lock has less than three of it left.
func retryGap(ttl time.Duration) time.Duration { return max(ttl/10, minRetryGap) }

const minRetryGap = 5 * time.Millisecond

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
		w.turns++
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
			if !now.Before(lk.validUntil) {
				expired = append(expired, lk)
				continue
			}
			// Every lock's own deadline, also while its renewal is on its way.
			next = earlier(next, lk.validUntil)
			switch {
			case lk.renewing:
			case now.Add(w.slack(lk)).Before(lk.nextCheck):
				next = earlier(next, lk.nextCheck)
			case lk.tryTurn():
				lk.renewing = true
				due = append(due, lk)
			default:
				// A Refresh is under way; it reschedules the lock when it
				// is done. Look again only if it takes long.
				lk.retrying = true
				lk.nextCheck = earlier(now.Add(retryGap(lk.ttl)), lk.validUntil)
				next = earlier(next, lk.nextCheck)
			}
		}
		w.target = next
		w.mu.Unlock()

		lost := expired[:0]
		for _, lk := range expired {
			if w.markLost(lk, lostExpired) {
				lost = append(lost, lk)
			}
		}
		if len(lost) > 0 {
			// Off the loop: a slow log handler must not hold up the next
			// lock's deadline.
			go w.logLost(lost, lostExpired)
		}
		// Batches of at most renewBatch, each one pipelined round trip,
		// all at once: 10,000 held locks cost ten round trips a tick, and a
		// huge pipeline never holds up the rest.
		for len(due) > 0 {
			n := min(len(due), renewBatch)
			go w.renew(due[:n:n])
			due = due[n:]
		}
		timer.Reset(next.Sub(now))
		select {
		case <-timer.C:
		case <-w.wake:
		}
	}
}

func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// renew extends the due locks, whose turns the loop took, in one
// Store.Extend. The round trip gets a third of the shortest validity left
// among them, so that one that hangs (a stalled connection) leaves time for
// more tries on fresh connections before that lock runs out; but never less
// than twice the last round trip that succeeded, so that a link that is
// slow but works is not timed out on every try. A try that timed out may
// still land; extends only lengthen a lease, so that is harmless.
func (w *watchdog) renew(due []*Lock) {
	defer func() {
		for _, lk := range due {
			lk.endTurn()
		}
	}()
	leases := make([]store.Lease, len(due))
	now := time.Now()
	budget := time.Hour
	t := w.l.telemetry
	var lags []time.Duration // how late each renewal starts, with telemetry
	if t != nil {
		lags = make([]time.Duration, 0, len(due))
	}
	w.mu.Lock()
	for i, lk := range due {
		leases[i] = store.Lease{Key: lk.skey, Token: lk.token, TTL: lk.ttl}
		if t != nil {
			lags = append(lags, now.Sub(lk.nextCheck))
		}
		budget = min(budget, lk.validUntil.Sub(now))
		if until := now.Add(lk.ttl); until.After(lk.reach) {
			lk.reach = until
		}
	}
	timeout := max(budget/3, min(budget, 2*w.rtt), time.Millisecond)
	w.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	start := time.Now()
	results := w.l.store.Extend(ctx, leases)
	if t != nil {
		t.renewBatch(lags, time.Since(start), results)
	}
	if ok := slices.ContainsFunc(results, func(r store.Renewal) bool { return r.Err == nil }); ok {
		w.roundTrip(time.Since(start))
	}
	for i, lk := range due {
		r := results[i]
		if t != nil {
			t.renewal(r.Err)
		}
		switch {
		case r.Err == nil:
			if !w.renewed(lk, leases[i].TTL, start, r.Validity) {
				w.l.extendedTooLate(lk)
			}
		case errors.Is(r.Err, ErrNotHeld):
			w.done(lk)
			w.lose(lk, lostRenewalNotHeld)
		default:
			w.retrySoon(lk, r.Err)
		}
	}
}

// done records that no renewal of lk is on its way any more.
func (w *watchdog) done(lk *Lock) {
	w.mu.Lock()
	lk.renewing = false
	w.mu.Unlock()
}

// retrySoon schedules another renewal of lk after a transient failure, no
// later than the end of its validity.
func (w *watchdog) retrySoon(lk *Lock, err error) {
	now := time.Now()
	w.mu.Lock()
	lk.renewing = false
	lk.retrying = true // no slack: retry at the gap, not at once
	left := lk.validUntil.Sub(now)
	// A few more tries fit before the lock runs out, also when its
	// validity is much shorter than its lease (a handed-over lock).
	gap := min(retryGap(lk.ttl), max(left/3, minRetryGap))
	lk.nextCheck = earlier(now.Add(gap), lk.validUntil)
	if _, ok := w.held[lk]; ok && w.running && lk.nextCheck.Before(w.target) {
		w.notify()
	}
	w.mu.Unlock()
	w.l.log.Debug("reqlock: renewal failed, retrying", logStoreKey, lk.skey, attrFence, lk.fence, logLeaseLeft, left, attrError, err)
	if lk.tel != nil {
		w.l.telemetry.renewalFailed(lk, err)
	}
}
