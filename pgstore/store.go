package pgstore

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reqlock/reqlock/core/store"
	contract "github.com/reqlock/reqlock/core/store"
)

// Store keeps locks, lines of waiters and records in PostgreSQL, through a
// pgxpool.Pool on the primary. Each lock operation is one function call,
// one round trip; the schema is in Schema (run Migrate once, or ship it
// with your own migrations). It implements contract.Store and every optional
// part of the contract: Canceler, Recorder, Waker, Granter and Inspector.
type Store struct {
	pool *pgxpool.Pool
	opts options

	nextSweep atomic.Int64 // unix nanoseconds; the next release at or after it sweeps
	// nextPermitSweep is nextSweep for the permits (semaphore.go); 0: not
	// yet set.
	nextPermitSweep atomic.Int64

	// strict is set once a statement failed as a serialization failure:
	// the database's default isolation is stricter than READ COMMITTED,
	// and every statement runs in a READ COMMITTED transaction of its own.
	strict atomic.Bool

	// lined is the keys granted here with waiters still in line: their
	// release goes straight to the function, which hands the lock on,
	// instead of trying the fast path's delete first.
	lined  sync.Map
	nLined atomic.Int64
}

// Option configures a Store.
type Option func(*options)

type options struct {
	sweepEvery time.Duration
	sweepLimit int
	tx         bool // WithTx
}

// WithSweep sets how often a release also deletes lapsed rows and expired
// records (every, default a minute per Store), and how many of each at
// most (limit, default 500): the tables stay bounded by what is live
// without a job of their own, and no release pays for more than limit. A
// sweep that deletes a full limit sweeps again at the next release, so it
// keeps up with expiries faster than limit per every.
func WithSweep(every time.Duration, limit int) Option {
	return func(o *options) {
		if every > 0 {
			o.sweepEvery = every
		}
		if limit > 0 {
			o.sweepLimit = limit
		}
	}
}

// New returns a store over pool. Call Migrate once before use, or run
// Schema with your own migrations. It panics if pool is nil.
//
// The pool must reach the primary, on session connections: a transaction
// pooler (PgBouncer in transaction mode) breaks LISTEN, which wakes
// waiters (see the package doc).
func New(pool *pgxpool.Pool, opts ...Option) *Store {
	if pool == nil {
		panic("pgstore: New: nil pool")
	}
	o := options{sweepEvery: time.Minute, sweepLimit: 500}
	for _, f := range opts {
		f(&o)
	}
	s := &Store{pool: pool, opts: o}
	s.nextSweep.Store(time.Now().Add(o.sweepEvery).UnixNano())
	return s
}

// Kind implements store.Kinder: the store attribute of telemetry.
func (s *Store) Kind() string { return "postgres" }

// TellsLapses implements store.LapseTeller: holders learn of a lapsed lease
// from their own clock, as on Redis.
func (s *Store) TellsLapses() bool { return false }

// The statements. pgx prepares each once per connection and then sends
// only its arguments.
const (
	acquireSQL = `SELECT o_status, o_fence, o_remaining_ms, o_record FROM reqlock_acquire($1, $2, $3, $4, $5, $6)`
	releaseSQL = `SELECT reqlock_release($1, $2, $3, $4, $5, $6)`
	recordSQL  = `SELECT reqlock_release_record($1, $2, $3, $4, $5, $6)`
	// The fast paths, the floor's own statements: an acquire of a key that
	// has no row is this insert alone, and a release with nobody in line
	// and nothing cancelled this delete alone. When they find nothing to
	// do, the function follows, in a second round trip: a function call
	// costs more than the rest of an uncontended statement.
	purgeSQL = `SELECT reqlock_purge($1)`
	// The insert draws its fence before it lands, and may wait between the
	// two (for a release of the key in flight) or be descheduled: it
	// reports whether no fence was drawn since, for any key, and else the
	// row, ours now, draws again (refenceSQL), so that a fence is never
	// below one the key had before.
	takeSQL = `INSERT INTO reqlock_locks (key, token, expires, fence)
		VALUES ($1, $2, clock_timestamp() + $3::bigint * interval '1 millisecond', nextval('reqlock_fence'))
		ON CONFLICT (key) DO NOTHING RETURNING fence, fence = (SELECT last_value FROM reqlock_fence)`
	refenceSQL = `UPDATE reqlock_locks SET fence = nextval('reqlock_fence') WHERE key = $1 AND token = $2 RETURNING fence`
	freeSQL    = `DELETE FROM reqlock_locks WHERE key = $1 AND token = $2 AND expires > clock_timestamp()
		AND (line_until <= clock_timestamp() OR cardinality(line) = 0) AND cancels_until <= clock_timestamp()`
	ttlSQL = `SELECT reqlock_ms(expires - clock_timestamp()) FROM reqlock_locks
		WHERE key = $1 AND token = $2 AND expires > clock_timestamp()`
	// The lease only grows: an extend whose answer was lost may land after
	// a later one, and must not cut short the lease its holder trusts.
	extendSQL = `UPDATE reqlock_locks l
		SET expires = greatest(l.expires, clock_timestamp() + x.ttl * interval '1 millisecond')
		FROM unnest($1::text[], $2::text[], $3::bigint[]) WITH ORDINALITY AS x(key, token, ttl, i)
		WHERE l.key = x.key AND l.token = x.token AND l.expires > clock_timestamp()
		RETURNING x.i`
)

// Acquire statuses, as reqlock_acquire returns them.
const (
	statusTaken     = 0
	statusGranted   = 1
	statusRecord    = 2
	statusCancelled = 3
)

// keepLine is how long a waiter's place in line, and a cancel marker, are
// kept after it was last asked for: well past the lease, as the fence
// counter's lifetime on Redis.
func keepLine(lease time.Duration) time.Duration { return max(10*lease, time.Minute) }

// Acquire implements contract.Store.
func (s *Store) Acquire(ctx context.Context, l store.Lease) (store.Grant, error) {
	g, _, err := s.acquire(ctx, l, nil, false)
	return g, err
}

// acquire runs reqlock_acquire: for waiter (nil: not in line), asking for
// the record when withRecord.
func (s *Store) acquire(ctx context.Context, l store.Lease, waiter *string, withRecord bool) (store.Grant, []byte, error) {
	var status int
	var fence, remaining *int64
	var record []byte
	if waiter == nil && !withRecord {
		// A waiter in line, or an acquire that looks for a record first,
		// skips the fast path: the key is likely taken, or the record
		// comes first.
		var f int64
		var latest bool
		err := s.run(ctx, stmt{sql: takeSQL, args: []any{rowKey(l.Key), l.Token, l.TTL.Milliseconds()},
			row: func(r pgx.Row) error { return r.Scan(&f, &latest) }})
		if err == nil && !latest {
			err = s.run(ctx, stmt{sql: refenceSQL, args: []any{rowKey(l.Key), l.Token},
				row: func(r pgx.Row) error { return r.Scan(&f) }})
			if errors.Is(err, pgx.ErrNoRows) {
				// Lapsed and taken over meanwhile: an outcome the caller
				// must undo, as any acquire whose answer came too late.
				err = errRefenceLost
			}
		}
		if err == nil {
			return store.Grant{Fence: uint64(f), Validity: contract.Validity(l.TTL)}, nil, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return store.Grant{}, nil, s.wrap("acquire", err)
		}
	}
	err := s.run(ctx, stmt{sql: acquireSQL, args: []any{rowKey(l.Key), l.Token, l.TTL.Milliseconds(), waiter,
		withRecord, keepLine(l.TTL).Milliseconds()},
		row: func(r pgx.Row) error { return r.Scan(&status, &fence, &remaining, &record) }})
	if err != nil {
		return store.Grant{}, nil, s.wrap("acquire", err)
	}
	switch status {
	case statusGranted:
		if deref(remaining) > 0 {
			s.contend(rowKey(l.Key))
		}
		return store.Grant{Fence: uint64(deref(fence)), Validity: contract.Validity(l.TTL)}, nil, nil
	case statusRecord:
		if record == nil { // an empty record is a record
			record = []byte{}
		}
		return store.Grant{}, record, nil
	case statusCancelled:
		return store.Grant{}, nil, errCancelled
	}
	e := &store.NotObtainedError{Remaining: time.Duration(deref(remaining)) * time.Millisecond}
	if waiter != nil {
		e.LastFence = uint64(deref(fence))
	}
	return store.Grant{}, nil, e
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// Extend implements contract.Store: every lease in one statement, one round
// trip.
func (s *Store) Extend(ctx context.Context, leases []store.Lease) []store.Renewal {
	return s.extend(ctx, extendSQL, "extend", leases)
}

// extend runs sql, an extend of every lease in one statement that returns
// the 1-based index of each lease it renewed; op names it in errors.
func (s *Store) extend(ctx context.Context, sql, op string, leases []store.Lease) []store.Renewal {
	out := make([]store.Renewal, len(leases))
	keys, tokens, ttls := make([]string, len(leases)), make([]string, len(leases)), make([]int64, len(leases))
	for i, l := range leases {
		keys[i], tokens[i], ttls[i] = rowKey(l.Key), l.Token, l.TTL.Milliseconds()
	}
	var held []bool
	err := s.run(ctx, stmt{sql: sql, args: []any{keys, tokens, ttls}, rows: func(rows pgx.Rows) error {
		held = make([]bool, len(leases)) // afresh: a retry reads the rows again
		var i int64
		_, err := pgx.ForEachRow(rows, []any{&i}, func() error {
			if i >= 1 && int(i) <= len(held) {
				held[i-1] = true
			}
			return nil
		})
		return err
	}})
	for i, l := range leases {
		switch {
		case err != nil:
			out[i].Err = s.wrap(op, err)
		case held[i]:
			out[i].Validity = contract.Validity(l.TTL)
		default:
			out[i].Err = contract.ErrNotHeld
		}
	}
	return out
}

// Release implements contract.Store: the token is compared, then the lock is
// handed to the next waiter in line, or freed.
func (s *Store) Release(ctx context.Context, key, token string) error {
	return s.release(ctx, key, token, nil, nil)
}

// release runs reqlock_release; marker cancels token for that long,
// leaving takes a waiter out of the line first.
func (s *Store) release(ctx context.Context, key, token string, marker *int64, leaving *string) error {
	err := s.releaseOnly(ctx, rowKey(key), token, marker, leaving)
	s.sweep(ctx)
	return err
}

func (s *Store) releaseOnly(ctx context.Context, key, token string, marker *int64, leaving *string) error {
	if marker == nil && leaving == nil && !s.contended(key, token) {
		var n int64
		err := s.run(ctx, stmt{sql: freeSQL, args: []any{key, token},
			tag: func(t pgconn.CommandTag) error { n = t.RowsAffected(); return nil }})
		if err != nil {
			return s.wrap("release", err)
		}
		if n == 1 {
			return nil
		}
	}
	var ok bool
	err := s.run(ctx, stmt{sql: releaseSQL, args: []any{key, token, marker, leaving,
		store.HandOffTimeout.Milliseconds(), 0}, row: func(r pgx.Row) error { return r.Scan(&ok) }})
	if err != nil {
		return s.wrap("release", err)
	}
	if !ok {
		return contract.ErrNotHeld
	}
	return nil
}

// sweep deletes up to the limit of lapsed rows and expired records, once
// every sweepEvery per Store, after a release: a round trip of its own,
// bounded by the limit. A sweep that found a full limit found a backlog
// (rows lapse faster than one limit a period), and the next release
// sweeps again, so the tables keep up with any rate.
func (s *Store) sweep(ctx context.Context) {
	next := s.nextSweep.Load()
	now := time.Now()
	if now.UnixNano() < next || !s.nextSweep.CompareAndSwap(next, now.Add(s.opts.sweepEvery).UnixNano()) {
		return
	}
	var n int
	// A failed sweep is tried again next period; the release it follows
	// has its own answer.
	err := s.run(ctx, stmt{sql: purgeSQL, args: []any{s.opts.sweepLimit},
		row: func(r pgx.Row) error { return r.Scan(&n) }})
	if err == nil && n >= s.opts.sweepLimit {
		s.nextSweep.Store(0)
	}
}

// TTL implements contract.Store.
func (s *Store) TTL(ctx context.Context, key, token string) (time.Duration, error) {
	var ms int64
	err := s.run(ctx, stmt{sql: ttlSQL, args: []any{rowKey(key), token},
		row: func(r pgx.Row) error { return r.Scan(&ms) }})
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, contract.ErrNotHeld
	}
	if err != nil {
		return 0, s.wrap("ttl", err)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// maxLined bounds lined: a lock that is never released (its holder died)
// leaves its key there, and the hint is only worth a round trip.
const maxLined = 4096

// contend notes that key was granted with waiters in line.
func (s *Store) contend(key string) {
	if _, loaded := s.lined.LoadOrStore(key, struct{}{}); !loaded && s.nLined.Add(1) > maxLined {
		s.lined.Clear()
		s.nLined.Store(0)
	}
}

// contended reports whether a release of token's lock on key likely has
// a waiter to hand to: the lock was handed over to a waiter (its token
// says so), or granted with others in line.
func (s *Store) contended(key, token string) bool {
	if _, ok := s.lined.LoadAndDelete(key); ok {
		s.nLined.Add(-1)
		return true
	}
	return strings.HasPrefix(token, "~")
}
