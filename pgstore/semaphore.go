package pgstore

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	contract "github.com/reqlock/reqlock/core/store"
)

// The permits of a key (store.Semaphores) are rows of reqlock_permits,
// apart from its lock's row, and its line of waiters rows of
// reqlock_permit_waiters (semaphore_lines.go). An acquire, a release, a
// cancel and a leave are one function call each, which serialises them per
// key with a transaction-level advisory lock; extend, TTL and inspect are
// one statement each.
const (
	permitAcquireSQL = `SELECT o_fence, o_remaining_ms FROM reqlock_acquire_permit($1, $2, $3, $4, $5, $6)`
	permitCancelSQL  = `SELECT reqlock_cancel_permit($1, $2, $3)`
	permitPurgeSQL   = `SELECT reqlock_purge_permits($1)`
	// An expired permit of the token goes too, answered as not held; the
	// head of the line is woken.
	permitReleaseSQL = `SELECT reqlock_release_permit($1, $2)`
	permitTTLSQL     = `SELECT reqlock_ms(expires - clock_timestamp()) FROM reqlock_permits
		WHERE key = $1 AND token = $2 AND expires > clock_timestamp()`
	// The lease only grows, as for locks.
	permitExtendSQL = `UPDATE reqlock_permits p
		SET expires = greatest(p.expires, clock_timestamp() + x.ttl * interval '1 millisecond')
		FROM unnest($1::text[], $2::text[], $3::bigint[]) WITH ORDINALITY AS x(key, token, ttl, i)
		WHERE p.key = x.key AND p.token = x.token AND p.expires > clock_timestamp()
		RETURNING x.i`
	permitInspectSQL = `SELECT token, reqlock_ms(expires - clock_timestamp()), fence FROM reqlock_permits
		WHERE key = $1 AND expires > clock_timestamp() ORDER BY fence`
)

var _ contract.Semaphores = (*Store)(nil)

// AcquirePermit implements store.Semaphores: a caller outside the line of
// waiters is admitted only while the places left outnumber them.
func (s *Store) AcquirePermit(ctx context.Context, l contract.Lease, limit int) (contract.Grant, error) {
	return s.acquirePermit(ctx, l, limit, nil)
}

// acquirePermit runs reqlock_acquire_permit for waiter (nil: not in line),
// which joins the line when refused.
func (s *Store) acquirePermit(ctx context.Context, l contract.Lease, limit int, waiter *string) (contract.Grant, error) {
	var fence, remaining *int64
	err := s.run(ctx, stmt{sql: permitAcquireSQL, args: []any{rowKey(l.Key), l.Token, l.TTL.Milliseconds(), limit,
		waiter, contract.PermitLineKeep.Milliseconds()},
		row: func(r pgx.Row) error { return r.Scan(&fence, &remaining) }})
	if err != nil {
		return contract.Grant{}, s.wrap("acquire permit", err)
	}
	switch f := deref(fence); {
	case f > 0:
		return contract.Grant{Fence: uint64(f), Validity: contract.Validity(l.TTL)}, nil
	case f < 0:
		return contract.Grant{}, errCancelled
	}
	return contract.Grant{}, &contract.NotObtainedError{Remaining: time.Duration(deref(remaining)) * time.Millisecond}
}

// ExtendPermits implements store.Semaphores: every lease in one statement.
func (s *Store) ExtendPermits(ctx context.Context, leases []contract.Lease) []contract.Renewal {
	return s.extend(ctx, permitExtendSQL, "extend permit", leases)
}

// ReleasePermit implements store.Semaphores: the permit goes, and the head
// of the key's line is woken. Now and then it also purges expired permits,
// cancel markers and silent waiters (WithSweep's period and limit).
func (s *Store) ReleasePermit(ctx context.Context, key, token string) error {
	var live *bool
	err := s.run(ctx, stmt{sql: permitReleaseSQL, args: []any{rowKey(key), token},
		row: func(r pgx.Row) error { return r.Scan(&live) }})
	s.sweepPermits(ctx)
	switch {
	case err != nil:
		return s.wrap("release permit", err)
	case live == nil || !*live:
		return contract.ErrNotHeld
	}
	return nil
}

// CancelPermit implements store.Semaphores: the permit goes (waking the
// head of the line), and the token's marker stays for a lease.
func (s *Store) CancelPermit(ctx context.Context, l contract.Lease) error {
	var live bool
	err := s.run(ctx, stmt{sql: permitCancelSQL, args: []any{rowKey(l.Key), l.Token, keepLine(l.TTL).Milliseconds()},
		row: func(r pgx.Row) error { return r.Scan(&live) }})
	if err != nil {
		return s.wrap("cancel permit", err)
	}
	if !live {
		return contract.ErrNotHeld
	}
	return nil
}

// PermitTTL implements store.Semaphores.
func (s *Store) PermitTTL(ctx context.Context, key, token string) (time.Duration, error) {
	var ms int64
	err := s.run(ctx, stmt{sql: permitTTLSQL, args: []any{rowKey(key), token},
		row: func(r pgx.Row) error { return r.Scan(&ms) }})
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, contract.ErrNotHeld
	}
	if err != nil {
		return 0, s.wrap("permit ttl", err)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// InspectPermits implements store.Semaphores: one read, nothing changes.
func (s *Store) InspectPermits(ctx context.Context, key string) ([]contract.Holding, error) {
	var hs []contract.Holding
	err := s.run(ctx, stmt{sql: permitInspectSQL, args: []any{rowKey(key)}, rows: func(rows pgx.Rows) error {
		hs = hs[:0] // afresh: a retry reads the rows again
		var token string
		var ms, fence int64
		_, err := pgx.ForEachRow(rows, []any{&token, &ms, &fence}, func() error {
			hs = append(hs, contract.Holding{Held: true, Lease: time.Duration(ms) * time.Millisecond,
				Fence: uint64(fence), Holder: contract.HolderOf(token)})
			return nil
		})
		return err
	}})
	if err != nil {
		return nil, s.wrap("inspect permits", err)
	}
	return hs, nil
}

// sweepPermits purges expired permits and cancel markers once every
// sweepEvery per Store, after a release, as sweep does for locks.
func (s *Store) sweepPermits(ctx context.Context) {
	next := s.nextPermitSweep.Load()
	now := time.Now()
	if next == 0 {
		s.nextPermitSweep.CompareAndSwap(0, now.Add(s.opts.sweepEvery).UnixNano())
		return
	}
	if now.UnixNano() < next || !s.nextPermitSweep.CompareAndSwap(next, now.Add(s.opts.sweepEvery).UnixNano()) {
		return
	}
	var n int
	err := s.run(ctx, stmt{sql: permitPurgeSQL, args: []any{s.opts.sweepLimit},
		row: func(r pgx.Row) error { return r.Scan(&n) }})
	if err == nil && n >= s.opts.sweepLimit {
		s.nextPermitSweep.Store(1) // a backlog: again at the next release
	}
}
