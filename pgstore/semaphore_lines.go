package pgstore

import (
	"context"
	"github.com/jackc/pgx/v5/pgconn"

	contract "github.com/reqlock/reqlock/core/store"
)

// The lines of waiters for permits (store.PermitLines), by the rules of
// redisstore's: a caller outside the line is admitted only while the
// places left outnumber the waiters, a waiter only while fewer waiters
// stand ahead of it than places are left. A release, a cancel or a leave
// wakes the head of the line with a NOTIFY on its instance's channel, as
// a lock's release does (reqlock_tell), and a waiter admitted with places
// still left wakes the next ones; the NOTIFY goes out as the call
// commits. A waiter keeps its place for store.PermitLineKeep from each ask.

var _ contract.PermitLines = (*Store)(nil)

const permitLeaveSQL = `SELECT reqlock_leave_permit_line($1, $2, $3)`

// AcquirePermitQueued implements store.PermitLines: AcquirePermit for a
// waiter, which joins the line when refused; the same call.
func (s *Store) AcquirePermitQueued(ctx context.Context, l contract.Lease, limit int, waiter string) (contract.Grant, error) {
	return s.acquirePermit(ctx, l, limit, &waiter)
}

// LeavePermitLine implements store.PermitLines: the waiter leaves the
// line, the waiter now at its head is woken, and an attempt of the waiter
// still on its way takes nothing when it lands (it neither joins the line
// again nor takes a permit). One round trip.
func (s *Store) LeavePermitLine(ctx context.Context, key, waiter string) error {
	err := s.run(ctx, stmt{sql: permitLeaveSQL, args: []any{rowKey(key), waiter, leaveMarker.Milliseconds()},
		tag: func(pgconn.CommandTag) error { return nil }})
	if err != nil {
		return s.wrap("leave permit line", err)
	}
	return nil
}

// SubscribePermits implements store.PermitLines: the same LISTEN
// subscription as the locks' (Subscribe), for the Semaphore's Locker.
func (s *Store) SubscribePermits(prefix, instance string, wake func(key, waiter string)) contract.Subscription {
	return s.Subscribe(prefix, instance, wake)
}
