package core

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// ErrNilFunc is returned by Lead for a nil fn.
var ErrNilFunc = errors.New("reqlock: nil function")

// Lead runs fn while this process leads key, and campaigns for key until
// ctx ends. Leadership is the lock on key, held for as long as fn runs and
// renewed by the watchdog; campaigning is waiting in the key's line, so the
// instances that wait take over in about the order they came.
//
// fn's context carries the lock (FromContext), whose Fence is the term:
// strictly greater than every earlier leader's, and the number to pass to
// whatever the leader writes, so that the writes of a leader that paused
// past its lease are refused. The context is cancelled with cause
// ErrLockLost when the lease is lost. Its Err also compares the lease with
// the local monotonic clock at each call, so a process that was stopped
// past its lease sees the term over at its first check after it resumes,
// before the watchdog has had a chance to run.
//
// When fn returns on its own, Lead resigns (the next in line takes over at
// once) and returns fn's error. When the term is lost, Lead waits for fn to
// return, then campaigns again; fn's error is dropped then. When ctx ends,
// Lead resigns and returns ctx.Err(). A store that fails while Lead
// campaigns is tried again until ctx ends; Lead never returns a store
// failure. A panic in fn resigns and goes on up.
//
// Lead relies on the watchdog: under WithoutWatchdog each term lasts one
// lease.
func (l *Locker) Lead(ctx context.Context, key string, fn func(context.Context) error) error {
	if fn == nil {
		return ErrNilFunc
	}
	if _, err := storeKey(l.prefix, key); err != nil {
		return err
	}
	for {
		lk, err := l.campaign(ctx, key)
		if err != nil {
			return err
		}
		err, lost := l.reign(ctx, lk, fn)
		if !lost {
			return err
		}
	}
}

// campaign waits for the lock on key until ctx ends, whatever the store
// answers meanwhile; its only error is ctx's.
func (l *Locker) campaign(ctx context.Context, key string) (*Lock, error) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		lk, err := l.Obtain(ctx, key)
		if err == nil {
			return lk, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// The retry policy gave up, or the store failed: a short pause, so
		// that neither spins, then in line again.
		if errors.Is(err, ErrUnavailable) {
			l.log.Debug("reqlock: campaign: store unavailable, trying again", attrError, err)
		}
		timer.Reset(campaignPause(l.ttl))
		select {
		case <-timer.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// campaignPause is how long a campaign waits after Obtain gave up: a tenth
// of the lease, jittered, so that instances that failed together do not
// come back together.
func campaignPause(ttl time.Duration) time.Duration {
	d := max(ttl/10, minRetryGap)
	return d/2 + rand.N(d)
}

// reign runs fn for the term lk and resigns after it; lost reports that
// the term was lost before fn returned (and ctx is still live), so that
// the caller campaigns again.
func (l *Locker) reign(ctx context.Context, lk *Lock, fn func(context.Context) error) (err error, lost bool) {
	if l.telemetry != nil {
		l.telemetry.termStarted()
	}
	tctx, cancel := lk.termContext(ctx)
	defer func() {
		cancel()
		if lk.isLost() || !lk.valid(time.Now()) {
			lost = true
			if l.telemetry != nil {
				l.telemetry.termLost()
			}
		}
		// A term that ran out by our clock may still be ours in the store:
		// give it back so that the next leader need not wait for the lease.
		_ = lk.ReleaseDetached(ctx)
		if ctx.Err() != nil {
			err, lost = ctx.Err(), false
		}
	}()
	return fn(tctx), false
}

// valid reports whether lk may still be relied on at now: not released,
// not lost, and its lease not run out by our monotonic clock. Unlike the
// loss the watchdog declares, it needs no goroutine to have run since the
// lease ended.
func (lk *Lock) valid(now time.Time) bool {
	if lk.done() {
		return false
	}
	w := &lk.locker.dog
	w.mu.Lock()
	defer w.mu.Unlock()
	return now.Before(lk.validUntil)
}

// termContext is lk.WithContext, whose Err also says the term is over when
// the lease ran out by the clock (see Lead).
func (lk *Lock) termContext(ctx context.Context) (context.Context, context.CancelFunc) {
	held, stop := lk.WithContext(ctx)
	tctx, cancel := context.WithCancelCause(held)
	return &termContext{Context: tctx, lk: lk, cancel: cancel}, func() {
		cancel(nil)
		stop()
	}
}

type termContext struct {
	context.Context
	lk     *Lock
	cancel context.CancelCauseFunc
}

// Err is the context's error, checked against the lease first: a context
// whose lease has run out is cancelled now, with cause ErrLockLost.
func (c *termContext) Err() error {
	if err := c.Context.Err(); err != nil {
		return err
	}
	if !c.lk.valid(time.Now()) {
		c.cancel(ErrLockLost)
	}
	return c.Context.Err()
}
