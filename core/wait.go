package core

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	cenkalti "github.com/cenkalti/backoff/v4"

	"github.com/reqlock/reqlock/core/store"
)

// waitQueue lines up the waiters of one key in one Locker: the waiter holding
// turn is the only one that polls the store; the rest wait for the turn.
type waitQueue struct {
	turn    chan struct{} // cap 1
	wake    chan struct{} // cap 1: a lock on this key was released here
	waiters int           // guarded by waitQueues.mu

	// The store's last answer that the key was taken, to any waiter here,
	// and when it came; guarded by waitQueues.mu.
	taken   *store.NotObtainedError
	takenAt time.Time
}

type waitQueues struct {
	mu    sync.Mutex
	byKey map[string]*waitQueue
	keys  atomic.Int32 // len(byKey): a release with nobody waiting skips mu
}

func (qs *waitQueues) join(skey string) *waitQueue {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if qs.byKey == nil {
		qs.byKey = make(map[string]*waitQueue)
	}
	q := qs.byKey[skey]
	if q == nil {
		q = &waitQueue{turn: make(chan struct{}, 1), wake: make(chan struct{}, 1)}
		qs.byKey[skey] = q
		qs.keys.Add(1)
	}
	q.waiters++
	return q
}

func (qs *waitQueues) leave(skey string, q *waitQueue) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if q.waiters--; q.waiters == 0 {
		delete(qs.byKey, skey)
		qs.keys.Add(-1)
	}
}

// sawTaken records the store's answer that q's key was taken.
func (qs *waitQueues) sawTaken(q *waitQueue, taken *store.NotObtainedError, at time.Time) {
	qs.mu.Lock()
	q.taken, q.takenAt = taken, at
	qs.mu.Unlock()
}

// lastTaken is the store's last answer that q's key was taken, if any.
func (qs *waitQueues) lastTaken(q *waitQueue) (*store.NotObtainedError, time.Time) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	return q.taken, q.takenAt
}

// wake tells the polling waiter of skey, if any, to try again now.
func (qs *waitQueues) wake(skey string) {
	if qs.keys.Load() == 0 {
		return
	}
	qs.mu.Lock()
	q := qs.byKey[skey]
	qs.mu.Unlock()
	if q != nil {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
}

// wait is Obtain after its first attempt found the lock taken (taken), or,
// with taken nil, before any attempt; withRecord makes each attempt look
// for the key's record too, and return it.
func (l *Locker) wait(ctx context.Context, key, skey string, taken *store.NotObtainedError, withRecord bool) (*Lock, []byte, error) {
	q := l.waiters.join(skey)
	defer l.waiters.leave(skey, q)

	// The holder's lease as last seen, counted down since: a waiter that
	// gives up after queueing for a while must not report the lease its
	// first attempt saw. Until the store has answered an attempt, nothing
	// says the key was taken: giving up then is ErrUnavailable, as for
	// TryObtain.
	answered := taken != nil
	if taken == nil {
		taken = &store.NotObtainedError{}
	}
	seen := time.Now()
	gaveUp := func() error {
		if !answered {
			// Queued behind this Locker's other waiters: their answer says
			// the key was taken.
			if t, at := l.waiters.lastTaken(q); t != nil {
				taken, seen, answered = t, at, true
			}
		}
		if !answered {
			return unavailable("acquire", ctxErr(ctx), ctx.Err())
		}
		left := taken.Remaining
		if left > 0 {
			left = max(left-time.Since(seen), time.Millisecond)
		}
		return &store.NotObtainedError{Remaining: left, Cause: ctxErr(ctx)}
	}
	b, err := l.awaitTurn(ctx, q, gaveUp, taken)
	if err != nil {
		return nil, nil, err
	}
	defer func() { <-q.turn }()

	waker, inLine := l.store.(store.Waker)
	var waiter string
	var wake *wakeSlot
	var woken chan struct{} // nil, never ready, for a store that wakes nobody
	subscribed, joined, got := false, false, false
	var sentInLine atomic.Bool // joined, for a subscription coming up alongside
	if inLine {
		// Listen before the attempt that may fail, so that a release between
		// that attempt and the subscription is not missed; a caller's
		// schedule does not wait for a connection to open, and is woken
		// once it listens instead (holdAlongside). The waiter
		// carries the Locker's holder label: a lock handed to it is held
		// under its name.
		waiter, wake = l.instance+"/"+newWaiterID()+l.holder, newWakeSlot()
		woken = wake.ch
		l.wakes.add(skey, waiter, wake)
		defer l.wakes.remove(skey, waiter)
		sub := l.subscription(waker)
		if l.retrySet && opening(sub) {
			// The caller's schedule starts now, not once a connection to
			// listen on is open: the subscription comes up alongside.
			defer holdAlongside(ctx, sub, l.releaseTimeout(), wake, &sentInLine)()
		} else {
			wctx, cancel := context.WithTimeout(ctx, l.releaseTimeout())
			done, err := sub.Hold(wctx)
			cancel()
			if subscribed = err == nil; subscribed {
				defer done()
			}
		}
		defer func() {
			if joined && !got {
				l.leaveLine(ctx, waker, skey, waiter)
			}
		}()
	}

	// The last attempt in line that the store turned away: when it was sent,
	// its round trip, and the last fence handed out then (0: unknown).
	var refused refusal

	// A permit waiter keeps its place in line only while it asks at least
	// every store.PermitLineKeep: between the attempts of a schedule that
	// waits longer, it asks in between, without using up the schedule.
	var keepPlace time.Duration
	if _, ok := l.store.(permitLineStore); ok {
		keepPlace = store.PermitLineKeep / 2
	}
	var due time.Time // the schedule's next attempt; zero: ask the schedule

	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for first := inLine; ; first = false {
		if !first {
			if now := time.Now(); due.IsZero() || !now.Before(due) {
				d := b.NextBackOff()
				if d < 0 { // backoff.Stop
					return nil, nil, taken
				}
				if subscribed && !l.retrySet {
					// A release wakes the head of the line, and a
					// subscription that lost its connection wakes every
					// waiter once it is back: without a policy of the
					// caller's, polling is only the fallback, for a holder
					// that never releases (its lease runs out), so it need
					// not be eager. A policy the caller set is the
					// schedule: a wake-up only comes earlier.
					d = max(d, store.HandOffTimeout+rand.N(store.HandOffTimeout/2))
				}
				// No point sleeping past the holder's lease: if it is not
				// renewed, the lock is free then.
				if taken.Remaining > 0 && d > taken.Remaining {
					d = taken.Remaining
				}
				due = now.Add(d)
			}
			d := time.Until(due)
			if keepPlace > 0 && joined && d > keepPlace {
				d = keepPlace // an ask that keeps the place, not the schedule's
			}
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-woken:
				due = time.Time{}
				if lk := l.handedOver(ctx, key, skey, waiter, wake.take(), refused, withRecord); lk != nil {
					got = true
					return lk, nil, nil
				}
			case <-q.wake:
				due = time.Time{}
			case <-ctx.Done():
				return nil, nil, gaveUp()
			}
		}
		// An attempt in line may join it even when its answer is lost.
		joined = joined || inLine
		sentInLine.Store(joined)
		sent := time.Now()
		var lk *Lock
		var record []byte
		var err error
		if inLine {
			var gone bool
			if lk, record, err, gone = l.attemptInLine(ctx, key, skey, withRecord, waiter, waker); gone {
				joined = false // the attempt's own clean-up leaves the line
				return nil, nil, gaveUp()
			}
		} else {
			lk, record, err = l.attempt(ctx, key, skey, withRecord, waiter)
		}
		if err == nil {
			got = lk != nil
			return lk, record, nil
		}
		if !errors.As(err, &taken) {
			if ctxErr(ctx) != nil {
				// Gave up: as waiting for a holder if the store said the
				// key was taken, else with the attempt's own failure.
				if g := gaveUp(); errors.Is(g, ErrNotObtained) {
					return nil, nil, g
				}
			}
			return nil, nil, err
		}
		answered, seen = true, time.Now()
		refused = refusal{at: sent, rtt: seen.Sub(sent), fence: taken.LastFence}
		l.waiters.sawTaken(q, taken, seen)
	}
}

// awaitTurn waits for q's turn to poll the store, and returns the
// caller's schedule for the rest of its wait. Queued behind this Locker's
// other waiters of the key, the caller keeps its place (one blocked send:
// Go serves a channel's senders in order) and asks nothing of the store,
// but a policy that gives up gives it up after the caller's own waits, with
// the key as the waiter ahead last found it (gaveUp), or as taken says when
// nobody has asked yet.
func (l *Locker) awaitTurn(ctx context.Context, q *waitQueue, gaveUp func() error, taken *store.NotObtainedError) (cenkalti.BackOff, error) {
	select {
	case q.turn <- struct{}{}:
		return l.retry(), nil
	default:
	}
	p := newPlan(l.retry(), time.Now())
	due, counted := p.next()
	t := time.NewTimer(time.Until(due))
	defer t.Stop()
	limit := t.C
	if !counted {
		limit = nil
	}
	for {
		select {
		case q.turn <- struct{}{}:
			return p.turn(time.Now(), l.retry()), nil
		case <-limit:
			if !p.stop {
				// The policy has waits left: count the next of them.
				due, counted = p.next()
				t.Reset(time.Until(due))
				if !counted {
					limit = nil
				}
				continue
			}
			if err := gaveUp(); errors.Is(err, ErrNotObtained) {
				return nil, err
			}
			return nil, taken
		case <-ctx.Done():
			return nil, gaveUp()
		}
	}
}

// attemptInLine is attempt for a waiter in the store's line. When ctx
// ends while the attempt is on its way, the caller gets gone at once, but
// the attempt is not cut short: cut short, its outcome is unknown, and a
// client that gives up on a command drops its connection (pgx, go-redis),
// so that the clean-up would first wait for a new one, maybe for longer
// than a hand-off, while a lock handed to the waiter stays with nobody.
// It answers instead, within a detached release's bound, over the
// connection it has; then what it took is released (and so handed on) and
// the waiter leaves the line, at once.
func (l *Locker) attemptInLine(ctx context.Context, key, skey string, withRecord bool, waiter string, w store.Waker) (lk *Lock, record []byte, err error, gone bool) {
	type answer struct {
		lk     *Lock
		record []byte
		err    error
	}
	actx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	answered := make(chan answer, 1)
	go func() {
		lk, record, err := l.attempt(actx, key, skey, withRecord, waiter)
		answered <- answer{lk, record, err}
	}()
	select {
	case a := <-answered:
		cancel()
		return a.lk, a.record, a.err, false
	case <-ctx.Done():
	}
	bound := time.AfterFunc(l.releaseTimeout(), cancel)
	go func() {
		a := <-answered
		bound.Stop()
		cancel()
		if a.lk != nil {
			_ = a.lk.ReleaseDetached(ctx) // taken out of line by the grant; the release hands it on
			return
		}
		l.leaveLine(ctx, w, skey, waiter)
	}()
	return nil, nil, nil, true
}

// refusal is a waiter's last attempt in line that the store turned away.
type refusal struct {
	at    time.Time     // when it was sent
	rtt   time.Duration // its round trip
	fence uint64        // the last fence handed out then; 0: unknown
}

// handedOver returns the lock a release handed to waiter with fence, as
// its wake-up said, when the waiter may rely on it without asking the
// store; nil when it must claim it with an acquire, as when it was told
// without a fence.
//
// release.lua hands the lock over for HandOffTimeout. The waiter's last
// attempt, sent at refused.at, was turned away when refused.fence was the
// last fence handed out: a larger fence was handed out after that, so the
// hand-off's lease started after refused.at and runs at least until
// refused.at + HandOffTimeout. A smaller or equal one is of a hand-off that
// ran out before that attempt, told late. The watchdog renews the lock to
// a whole lease a third of the way to the end of that bound, so only a
// lock with time left for a few renewal round trips is taken this way; a
// short hold is released before any renewal. A waiter that looks for a
// record claims instead: its acquire looks for the record first.
func (l *Locker) handedOver(ctx context.Context, key, skey, waiter string, fence uint64, refused refusal, withRecord bool) *Lock {
	if fence == 0 || refused.fence == 0 || fence <= refused.fence || withRecord || !l.autoRenew {
		return nil
	}
	now := time.Now()
	validUntil := refused.at.Add(validity(store.HandOffTimeout))
	if validUntil.Sub(now) < max(minHandedOver, handedOverRoundTrips*max(refused.rtt, l.dog.lastRoundTrip())) {
		return nil
	}
	return l.held(ctx, key, skey, handedOverToken(waiter), fence, now, validUntil, now.Add(store.HandOffTimeout), nil)
}

// minHandedOver is the least time left on a handed-over lock for its waiter
// to take it without a round trip, and handedOverRoundTrips that time in
// round trips to the store: the watchdog's first renewal goes a third of
// the way, and must have time to come back, or to be tried again.
const (
	minHandedOver        = store.HandOffTimeout / 5
	handedOverRoundTrips = 8
)

// leaveLine takes a waiter that gave up out of its key's line, in the
// background: if a release handed it the lock meanwhile, that goes on to
// the next in line at once, instead of after HandOffTimeout. It is retried
// for a lease, as a cancel is: on Redis it also leaves the marker that
// voids the wait's attempts still on their way (see redisstore.Store.Leave).
func (l *Locker) leaveLine(ctx context.Context, w store.Waker, skey, waiter string) {
	l.undo(ctx, time.Now().Add(l.ttl), skey, undoLeaveLine, func(ctx context.Context) error {
		return w.Leave(ctx, skey, waiter)
	})
}

// wakeLocal tells this Locker's waiter of skey that a lock of the key was
// released here. A store that wakes waiters itself (Waker) has handed the
// lock to whoever is next in line, maybe elsewhere, and woken that one.
func (l *Locker) wakeLocal(skey string) {
	if _, ok := l.store.(store.Waker); !ok {
		l.waiters.wake(skey)
	}
}
