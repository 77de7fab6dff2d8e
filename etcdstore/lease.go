package etcdstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// A Store keeps one etcd lease per lease length in whole seconds (a
// Locker's locks all have one length, so one lease), and attaches every
// lock of that length to it. Renewing the locks is renewing the lease: one
// keep-alive however many locks are held, and one that is lost loses
// exactly the locks on it.
//
// etcd counts leases in whole seconds: a lock's lease is its TTL rounded up
// to the second. What a holder is told it may rely on (Grant.Validity) is
// never more than its TTL less core's drift margin, counted from before
// the keep-alive or grant was sent, so its Lost closes before etcd can
// expire the lease, by the holder's own clock.
//
// A lease is kept alive when a lock on it is renewed (Extend), when an
// acquire finds it has less than half of its length left, and while a
// waiter of this store stands in line on it. So a lock whose Locker does
// not renew it (WithoutWatchdog) lives at least its TTL, and may live
// longer while the same Store keeps the lease alive for others.
type leases struct {
	s       *Store
	mu      sync.Mutex
	byClass map[int64]*lease // the current lease of each length
	byID    map[clientv3.LeaseID]*lease
}

type lease struct {
	id   clientv3.LeaseID
	secs int64
	ka   chan struct{} // cap 1: one keep-alive at a time

	mu       sync.Mutex
	deadline time.Time // by our clock, etcd cannot expire it before this
	dead     bool
}

func (ls *leases) init(s *Store) {
	ls.s = s
	ls.byClass = make(map[int64]*lease)
	ls.byID = make(map[clientv3.LeaseID]*lease)
}

// seconds is ttl rounded up to etcd's whole seconds.
func seconds(ttl time.Duration) int64 {
	return max(int64((ttl+time.Second-1)/time.Second), 1)
}

// left is how long lease id, one of this store's, has by our clock.
func (ls *leases) left(id clientv3.LeaseID, now time.Time) (time.Duration, bool) {
	ls.mu.Lock()
	l := ls.byID[id]
	ls.mu.Unlock()
	if l == nil {
		return 0, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dead {
		return 0, true
	}
	return max(l.deadline.Sub(now), 0), true
}

func (l *lease) state() (deadline time.Time, dead bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.deadline, l.dead
}

// isDead reports whether etcd may have expired l: it said so, or our clock
// passed its deadline.
func (l *lease) isDead(now time.Time) bool {
	d, dead := l.state()
	return dead || !now.Before(d)
}

// current returns the lease for locks of ttl with at least half of ttl
// left, keeping the current one alive or granting a new one as needed.
func (ls *leases) current(ctx context.Context, ttl time.Duration) (*lease, error) {
	secs := seconds(ttl)
	ls.mu.Lock()
	l := ls.byClass[secs]
	ls.mu.Unlock()
	if l != nil && !l.isDead(time.Now()) {
		err := ls.keepAlive(ctx, l, ttl/2)
		if err == nil {
			return l, nil
		}
		if !errors.Is(err, ErrLeaseExpired) {
			return nil, err
		}
	}
	return ls.grant(ctx, secs)
}

// grant makes a new lease of secs the current one of its length. The lease
// it replaces is dead (or about to be): its locks are lost.
func (ls *leases) grant(ctx context.Context, secs int64) (*lease, error) {
	ls.mu.Lock()
	// Another call may have granted one meanwhile.
	if l := ls.byClass[secs]; l != nil && !l.isDead(time.Now()) {
		ls.mu.Unlock()
		return l, nil
	}
	ls.mu.Unlock()
	sent := time.Now()
	r, err := ls.s.c.Grant(reqCtx(ctx), secs)
	if err != nil {
		return nil, ls.s.failure("grant lease", err)
	}
	l := &lease{id: r.ID, secs: secs, ka: make(chan struct{}, 1), deadline: sent.Add(time.Duration(min(r.TTL, secs)) * time.Second)}
	ls.mu.Lock()
	if old := ls.byClass[secs]; old != nil {
		// Kept in byID, dead: a lock found on it is not renewed.
		old.markDead()
	}
	ls.byClass[secs] = l
	ls.byID[l.id] = l
	ls.mu.Unlock()
	return l, nil
}

func (l *lease) markDead() {
	l.mu.Lock()
	l.dead = true
	l.mu.Unlock()
}

// keepAlive renews l unless it has at least fresh left already (a renewal
// a moment ago serves every lock on it). ErrLeaseExpired when etcd no
// longer has it, or our clock says it may have expired it.
func (ls *leases) keepAlive(ctx context.Context, l *lease, fresh time.Duration) error {
	select {
	case l.ka <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-l.ka }()
	now := time.Now()
	deadline, dead := l.state()
	if dead || !now.Before(deadline) {
		l.markDead()
		return ErrLeaseExpired
	}
	if deadline.Sub(now) >= fresh {
		return nil
	}
	r, err := ls.s.c.KeepAliveOnce(reqCtx(ctx), l.id)
	if err != nil {
		if errors.Is(err, rpctypes.ErrLeaseNotFound) {
			l.markDead()
			return ErrLeaseExpired
		}
		return ls.s.failure("keep-alive", err)
	}
	until := now.Add(time.Duration(min(r.TTL, l.secs)) * time.Second)
	l.mu.Lock()
	if until.After(l.deadline) {
		l.deadline = until
	}
	l.mu.Unlock()
	return nil
}

// validity is how long, from start, a lock of ttl on l may be relied on.
// It is never more than ttl, and takes core's drift margin (for the
// lease's whole length) off the lease's deadline.
func (l *lease) validity(ttl time.Duration, start time.Time) time.Duration {
	deadline, _ := l.state()
	margin := drift(max(ttl, time.Duration(l.secs)*time.Second))
	return min(ttl.Truncate(time.Millisecond), deadline.Sub(start)) - margin
}

// drift is core's margin (store.Drift): the store's clock may run a little
// fast, and the answer took a moment to come back.
func drift(d time.Duration) time.Duration { return d/100 + 2*time.Millisecond }
