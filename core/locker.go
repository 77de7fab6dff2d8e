package core

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core/internal/burstlog"
	"github.com/reqlock/reqlock/core/store"
)

// Locker hands out locks from one Store. It is safe for concurrent use and
// meant to be shared: one per store per process. It renews the locks it hands
// out with a single background goroutine that exists only while locks are
// held, so a Locker needs no Close.
type Locker struct {
	store     Store
	ttl       time.Duration
	retry     backoff.Policy
	retrySet  bool // WithRetry: retry is the caller's schedule, followed as is
	autoRenew bool
	prefix    string
	log       *slog.Logger
	warnings  burstlog.Log  // the warnings logged on log, one line per burst
	perTry    time.Duration // bound on each acquire round trip; 0: ctx alone
	telemetry *telemetry    // nil: no metrics or spans, and no work for them
	holder    string        // "." + the WithHolder label, or ""
	doubt     DoubtPolicy   // what Once does after a run in doubt

	dog     watchdog
	waiters waitQueues

	// The subscription to releases, for a store that wakes waiters (Waker),
	// and who waits for what.
	subOnce sync.Once
	// handsOver: the store's releases hand the lock to a waiter's name
	// (granter), so a wait's attempts carry that name as their token.
	handsOver bool
	// lapses: the store may be a memorystore.Store, directly or wrapped, which
	// tells a holder whose lease ran out (see lapseTarget).
	lapses bool
	// marksOnAcquire: the store marks a run in the acquire that looks for
	// the record (store.AcquireMarker), when asked (ContextWithRunMark).
	marksOnAcquire bool
	sub            store.Subscription
	wakes          wakeRegistry
	instance       string // names this Locker in the lines of a Waker store
}

// subscription returns the Locker's one subscription to w's releases.
func (l *Locker) subscription(w store.Waker) store.Subscription {
	l.subOnce.Do(func() {
		if g, ok := w.(store.Granter); ok {
			l.sub = g.SubscribeGrants(l.prefix, l.instance, l.wakes.grant)
		} else {
			l.sub = w.Subscribe(l.prefix, l.instance, l.wakes.wake)
		}
	})
	return l.sub
}

// NewLocker returns a Locker over s. It panics if s is nil.
func NewLocker(s Store, opts ...Option) *Locker {
	if s == nil {
		panic("reqlock: NewLocker: nil Store")
	}
	l := &Locker{
		store:     s,
		ttl:       DefaultTTL,
		retry:     DefaultRetry,
		autoRenew: true,
		prefix:    DefaultPrefix,
		log:       slog.Default(),
	}
	for _, o := range opts {
		o(l)
	}
	l.dog.init(l)
	l.instance = newWaiterID()
	_, l.handsOver = s.(store.Granter)
	l.lapses = mayTellLapses(s)
	if m, ok := s.(store.AcquireMarker); ok {
		l.marksOnAcquire = m.MarksOnAcquire()
	}
	return l
}

// StoreKey is the key the store uses for key: prefix + {hash of key}. It is
// what to look for in redis-cli; the raw key itself is never written.
func (l *Locker) StoreKey(key string) (string, error) { return storeKey(l.prefix, key) }

// TTL is the lease every lock from l starts with.
func (l *Locker) TTL() time.Duration { return l.ttl }

// TryObtain makes one attempt. When someone else holds the lock the error is
// a *NotObtainedError (errors.Is ErrNotObtained) carrying the holder's
// remaining lease; a store failure is ErrUnavailable.
func (l *Locker) TryObtain(ctx context.Context, key string) (*Lock, error) {
	if l.telemetry != nil {
		return l.telemetry.lockCall(ctx, modeTry, func(ctx context.Context) (*Lock, error) { return l.tryObtain(ctx, key) })
	}
	return l.tryObtain(ctx, key)
}

func (l *Locker) tryObtain(ctx context.Context, key string) (*Lock, error) {
	skey, err := storeKey(l.prefix, key)
	if err != nil {
		return nil, err
	}
	lk, _, err := l.attempt(ctx, key, skey, false, "")
	return lk, err
}

// Obtain waits for the lock: it retries by the Locker's policy, never sleeps
// past the holder's remaining lease, and wakes at once when a lock of this
// Locker on the same key is released. Only one waiter per key in this Locker
// polls the store; the others queue behind it. When ctx ends while it waits
// for a holder, the error is both ErrNotObtained and the context's error;
// when ctx ends before the store answered its first attempt (or had ended
// already), it is ErrUnavailable and the context's error, as for TryObtain:
// nothing says the key was taken.
func (l *Locker) Obtain(ctx context.Context, key string) (*Lock, error) {
	if l.telemetry != nil {
		return l.telemetry.lockCall(ctx, modeWait, func(ctx context.Context) (*Lock, error) { return l.obtain(ctx, key) })
	}
	return l.obtain(ctx, key)
}

func (l *Locker) obtain(ctx context.Context, key string) (*Lock, error) {
	skey, err := storeKey(l.prefix, key)
	if err != nil {
		return nil, err
	}
	if l.listening(skey) {
		// Releases of the key reach us already: wait in line from the
		// first attempt on, instead of trying once outside it first.
		lk, _, err := l.wait(ctx, key, skey, nil, false)
		return lk, err
	}
	lk, _, err := l.attempt(ctx, key, skey, false, "")
	var taken *store.NotObtainedError
	if err == nil || !errors.As(err, &taken) {
		return lk, err
	}
	lk, _, err = l.wait(ctx, key, skey, taken, false)
	return lk, err
}

// listening reports whether the Locker's subscription already hears its
// releases (a waiter was here a moment ago).
func (l *Locker) listening(skey string) bool {
	waker, ok := l.store.(store.Waker)
	if !ok {
		return false
	}
	w, ok := l.subscription(waker).(store.Listener)
	return ok && w.Listening()
}

// ObtainAfter is Obtain for a caller whose own TryObtain just found the key
// taken: it waits as Obtain does, without first trying again at once.
// taken is that TryObtain's error; any other error makes it plain Obtain.
func (l *Locker) ObtainAfter(ctx context.Context, key string, taken error) (*Lock, error) {
	if l.telemetry != nil {
		return l.telemetry.lockCall(ctx, modeWait, func(ctx context.Context) (*Lock, error) { return l.obtainAfter(ctx, key, taken) })
	}
	return l.obtainAfter(ctx, key, taken)
}

func (l *Locker) obtainAfter(ctx context.Context, key string, taken error) (*Lock, error) {
	var no *store.NotObtainedError
	if !errors.As(taken, &no) {
		return l.obtain(ctx, key)
	}
	skey, err := storeKey(l.prefix, key)
	if err != nil {
		return nil, err
	}
	lk, _, err := l.wait(ctx, key, skey, no, false)
	return lk, err
}

// Do runs fn while holding the lock for key, waiting for it as Obtain does.
// fn's context carries the lock (FromContext) and is cancelled with cause
// ErrLockLost if the lock is lost while fn runs. The lock is released when fn
// returns or panics, with a context detached from ctx so that a cancelled
// caller does not leave the lock behind; a panic goes on up after that.
func (l *Locker) Do(ctx context.Context, key string, fn func(context.Context) error) (err error) {
	lk, err := l.Obtain(ctx, key)
	if err != nil {
		return err
	}
	lctx, cancel := lk.WithContext(ctx)
	defer func() {
		cancel()
		relErr := lk.ReleaseDetached(ctx)
		switch {
		case lk.isLost():
			err = joinErrors(err, ErrLockLost)
		case relErr != nil:
			err = joinErrors(err, relErr)
		}
	}()
	return fn(lctx)
}

// attempt is one Acquire with a fresh token; withRecord makes it
// AcquireOrRecord, whose record it returns instead of a lock when there is
// one.
//
// waiter, when not "", is the id of a wait that stands in the key's line
// (the store is a Waker).
func (l *Locker) attempt(ctx context.Context, key, skey string, withRecord bool, waiter string) (*Lock, []byte, error) {
	var token string
	if waiter != "" && l.handsOver {
		// Every attempt of one wait carries the waiter's name, which a
		// release hands the lock to: the marker that a release, cancel or
		// Leave of that name leaves then voids every copy of them still on
		// its way, as it does a plain attempt's (see acquire.lua).
		token = handedOverToken(waiter)
	} else {
		token = l.labelled(newToken())
	}
	start := time.Now()
	actx := ctx
	if d := l.attemptTimeout(ctx); d > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	var lapse *lapseTarget
	if l.lapses {
		lapse = &lapseTarget{dog: &l.dog}
		actx = withLapse(actx, lapse)
	}
	lease := store.Lease{Key: skey, Token: token, TTL: l.ttl}
	if withRecord && l.marksOnAcquire {
		lease.Mark = l.runMarkFrom(ctx)
	}
	var g store.Grant
	var record []byte
	var err error
	switch {
	case waiter != "":
		g, record, err = l.store.(store.Waker).AcquireQueued(actx, lease, waiter, withRecord)
	case withRecord:
		g, record, err = l.store.(store.Recorder).AcquireOrRecord(actx, lease)
	default:
		g, err = l.store.Acquire(actx, lease)
	}
	if record != nil && err == nil {
		return nil, record, nil
	}
	if err != nil {
		if errors.Is(err, ErrNotObtained) {
			return nil, nil, err
		}
		// The script may have run and only the reply been lost, or it may
		// still be on its way (a cancelled caller, a timeout): take back
		// what our token holds or would hold.
		l.abandon(ctx, lease, start)
		return nil, nil, unavailable("acquire", ctxErr(actx), err)
	}
	lk := l.held(ctx, key, skey, token, g.Fence, start, start.Add(g.Validity), start.Add(l.ttl), lapse)
	if lease.Mark.Retention > 0 {
		lk.mu.Lock()
		lk.mark = acquiredMark{retention: lease.Mark.Retention, again: lease.Mark.Again, doubt: g.InDoubt}
		lk.mu.Unlock()
	}
	l.dog.roundTrip(time.Since(start))
	if lapse != nil {
		lapse.bind(lk)
	}
	return lk, nil, nil
}

// held returns the Lock on skey that token holds with fence, since since:
// valid until validUntil by our clock, and its lease in the store may run
// until reach. The watchdog renews it a third of the way to validUntil.
// lapse, when not nil, is the memory store's word for it (see lapseTarget).
func (l *Locker) held(ctx context.Context, key, skey, token string, fence uint64, since, validUntil, reach time.Time, lapse *lapseTarget) *Lock {
	lk := &Lock{
		locker:     l,
		key:        key,
		skey:       skey,
		token:      token,
		fence:      fence,
		ttl:        l.ttl,
		validUntil: validUntil,
		reach:      reach,
		turn:       make(chan struct{}, 1),
		lapse:      lapse,
	}
	if l.telemetry != nil {
		l.telemetry.obtained(ctx, lk, since)
	}
	l.dog.add(lk, since)
	return lk
}

// attemptTimeout is the bound on one acquire round trip: the context's
// (ContextWithAttemptTimeout), else the Locker's (WithAttemptTimeout).
func (l *Locker) attemptTimeout(ctx context.Context) time.Duration {
	if d, ok := ctx.Value(attemptTimeoutKey{}).(time.Duration); ok {
		return d
	}
	return l.perTry
}

type attemptTimeoutKey struct{}

// ContextWithAttemptTimeout bounds each round trip that Obtain, TryObtain or
// Do makes to the store under the returned context to d, whatever the
// Locker's WithAttemptTimeout says, while ctx still bounds the whole wait:
// a store that hangs is noticed within d, not only when ctx ends.
func ContextWithAttemptTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, attemptTimeoutKey{}, d)
}

// releaseTimeout bounds a release made on a context detached from the caller.
func (l *Locker) releaseTimeout() time.Duration { return detachedReleaseTimeout(l.ttl) }

// newToken returns 128 random bits, URL-safe: unguessable, so only the holder
// can extend or release.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return base64.RawURLEncoding.EncodeToString(b[:])
}
