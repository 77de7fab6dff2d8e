package retrycases

import (
	"context"
	"sync"
	"time"

	"github.com/reqlock/reqlock/core/store"
)

// Attempt is one acquire a Locker sent through a Recorder.
type Attempt struct {
	Start, End time.Time
	Queued     bool // AcquireQueued: the waiter stood in the store's line
}

// Recorder passes every call on to a store and notes when each acquire
// was sent and answered. It is a Waker (and a Granter, and a Canceler)
// when the store it wraps is, so that a Locker over it waits as over the
// store itself.
type Recorder interface {
	store.Store
	// Attempts returns the acquires so far, in the order they were sent.
	Attempts() []Attempt
	// Listened returns when each Hold of a subscription returned holding
	// it: a Locker wakes a waiter already in line then, once, since a
	// release may have gone unheard before.
	Listened() []time.Time
}

// Record wraps s.
func Record(s store.Store) Recorder {
	r := &recorder{inner: s}
	w, ok := s.(store.Waker)
	if !ok {
		return r
	}
	q := &queuedRecorder{recorder: r, waker: w}
	if g, ok := s.(store.Granter); ok {
		return &grantingRecorder{queuedRecorder: q, granter: g}
	}
	return q
}

type recorder struct {
	inner store.Store

	mu       sync.Mutex
	attempts []Attempt
	listened []time.Time
}

func (r *recorder) note(start time.Time, queued bool) {
	r.mu.Lock()
	r.attempts = append(r.attempts, Attempt{Start: start, End: time.Now(), Queued: queued})
	r.mu.Unlock()
}

func (r *recorder) Attempts() []Attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Attempt(nil), r.attempts...)
}

func (r *recorder) Listened() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.listened...)
}

// subscription notes when sub's Hold returns holding it, and is a
// store.Listener when sub is.
func (r *recorder) subscription(sub store.Subscription) store.Subscription {
	h := &heldRecorder{r: r, sub: sub}
	if l, ok := sub.(store.Listener); ok {
		return listeningRecorder{h, l}
	}
	return h
}

type heldRecorder struct {
	r   *recorder
	sub store.Subscription
}

func (h *heldRecorder) Hold(ctx context.Context) (func(), error) {
	done, err := h.sub.Hold(ctx)
	if err == nil {
		h.r.mu.Lock()
		h.r.listened = append(h.r.listened, time.Now())
		h.r.mu.Unlock()
	}
	return done, err
}

type listeningRecorder struct {
	*heldRecorder
	store.Listener
}

func (r *recorder) Acquire(ctx context.Context, l store.Lease) (store.Grant, error) {
	start := time.Now()
	g, err := r.inner.Acquire(ctx, l)
	r.note(start, false)
	return g, err
}

func (r *recorder) Extend(ctx context.Context, leases []store.Lease) []store.Renewal {
	return r.inner.Extend(ctx, leases)
}

func (r *recorder) Release(ctx context.Context, key, token string) error {
	return r.inner.Release(ctx, key, token)
}

func (r *recorder) TTL(ctx context.Context, key, token string) (time.Duration, error) {
	return r.inner.TTL(ctx, key, token)
}

// Cancel is the store's, or Release for a store that has none: what the
// Locker would do without the wrapper.
func (r *recorder) Cancel(ctx context.Context, l store.Lease) error {
	if c, ok := r.inner.(store.Canceler); ok {
		return c.Cancel(ctx, l)
	}
	return r.inner.Release(ctx, l.Key, l.Token)
}

type queuedRecorder struct {
	*recorder
	waker store.Waker
}

func (q *queuedRecorder) AcquireQueued(ctx context.Context, l store.Lease, waiter string, withRecord bool) (store.Grant, []byte, error) {
	start := time.Now()
	g, rec, err := q.waker.AcquireQueued(ctx, l, waiter, withRecord)
	q.note(start, true)
	return g, rec, err
}

func (q *queuedRecorder) Leave(ctx context.Context, key, waiter string) error {
	return q.waker.Leave(ctx, key, waiter)
}

func (q *queuedRecorder) Subscribe(prefix, instance string, wake func(key, waiter string)) store.Subscription {
	return q.subscription(q.waker.Subscribe(prefix, instance, wake))
}

type grantingRecorder struct {
	*queuedRecorder
	granter store.Granter
}

func (g *grantingRecorder) SubscribeGrants(prefix, instance string, grant func(key, waiter string, fence uint64)) store.Subscription {
	return g.subscription(g.granter.SubscribeGrants(prefix, instance, grant))
}
