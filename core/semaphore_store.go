package core

import (
	"context"
	"time"

	"github.com/reqlock/reqlock/core/store"
)

// permitStore is a store's permits of one limit seen as a Store, so that
// a Semaphore's Locker takes, renews, releases and cancels permits through
// the very calls it makes for locks.
type permitStore struct {
	s     store.Semaphores
	limit int
}

var (
	_ store.Store       = permitStore{}
	_ store.Canceler    = permitStore{}
	_ store.LapseTeller = permitStore{}
)

func (p permitStore) Acquire(ctx context.Context, l store.Lease) (store.Grant, error) {
	return p.s.AcquirePermit(ctx, l, p.limit)
}

func (p permitStore) Extend(ctx context.Context, leases []store.Lease) []store.Renewal {
	return p.s.ExtendPermits(ctx, leases)
}

func (p permitStore) Release(ctx context.Context, key, token string) error {
	return p.s.ReleasePermit(ctx, key, token)
}

func (p permitStore) TTL(ctx context.Context, key, token string) (time.Duration, error) {
	return p.s.PermitTTL(ctx, key, token)
}

func (p permitStore) Cancel(ctx context.Context, l store.Lease) error {
	return p.s.CancelPermit(ctx, l)
}

// TellsLapses implements store.LapseTeller: a permit's holder learns of a
// lapsed lease from its own clock, on every store.
func (permitStore) TellsLapses() bool { return false }

// Kind implements store.Kinder with the kind of the store under it.
func (p permitStore) Kind() string {
	if k, ok := p.s.(store.Kinder); ok {
		return k.Kind()
	}
	return "other"
}

// permitLineStore is permitStore over a store that keeps lines of waiters
// for permits: a Waker, so that a Semaphore's waiters stand in line across
// instances and are woken by releases, through the Locker's own wait.
type permitLineStore struct {
	permitStore
	lines store.PermitLines
}

var _ store.Waker = permitLineStore{}

func (p permitLineStore) AcquireQueued(ctx context.Context, l store.Lease, waiter string, _ bool) (store.Grant, []byte, error) {
	g, err := p.lines.AcquirePermitQueued(ctx, l, p.limit, waiter)
	return g, nil, err
}

func (p permitLineStore) Leave(ctx context.Context, key, waiter string) error {
	return p.lines.LeavePermitLine(ctx, key, waiter)
}

func (p permitLineStore) Subscribe(prefix, instance string, wake func(key, waiter string)) store.Subscription {
	return p.lines.SubscribePermits(prefix, instance, wake)
}
