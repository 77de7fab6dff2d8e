package etcdstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// A Store attaches its locks to etcd leases it shares between them: the
// locks of one length (a Locker's locks all have one) taken within a third
// of that length go on one lease. Renewing the locks is renewing their
// lease: one keep-alive per lease however many locks are on it, and a lease
// that is lost loses exactly the locks on it.
//
// A lock is never kept alive by anything but the renewal of a lock on its
// own lease: an acquire never renews a lease, it takes a new one when the
// current one has less than two thirds of the length left. So a lock whose
// Locker does not renew it (WithoutWatchdog) runs out on time.
//
// etcd counts leases in whole seconds: a lock's lease is its TTL rounded up
// to the second. What a holder is told it may rely on (Grant.Validity,
// Renewal.Validity) is never more than its TTL, nor than the lease's time
// left by our clock, counted from before the grant or keep-alive was sent,
// less core's drift margin: its Lost closes before etcd can expire the
// lease, by the holder's own clock.
//
// Waiters stand in line on leases of their own (Store.lineLeases), which
// the store keeps alive while they wait: a waiter must not keep alive the
// lease of a lock that nobody renews.
type leases struct {
	s        *Store
	renewUse bool // current renews the current lease instead of replacing it (lines)

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

func (ls *leases) init(s *Store, renewUse bool) {
	ls.s, ls.renewUse = s, renewUse
	ls.byClass = make(map[int64]*lease)
	ls.byID = make(map[clientv3.LeaseID]*lease)
}

// seconds is ttl rounded up to etcd's whole seconds.
func seconds(ttl time.Duration) int64 {
	return max(int64((ttl+time.Second-1)/time.Second), 1)
}

// byLeaseID returns this store's lease id, or nil.
func (ls *leases) byLeaseID(id clientv3.LeaseID) *lease {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.byID[id]
}

// left is how long lease id, one of this store's, has by our clock.
func (ls *leases) left(id clientv3.LeaseID, now time.Time) (time.Duration, bool) {
	l := ls.byLeaseID(id)
	if l == nil {
		return 0, false
	}
	d, dead := l.state()
	if dead {
		return 0, true
	}
	return max(d.Sub(now), 0), true
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

func (l *lease) markDead() {
	l.mu.Lock()
	l.dead = true
	l.mu.Unlock()
}

// current returns the lease for a lock (or a waiter) of ttl: the current
// one of its length while it has two thirds of ttl left, else a new one; on
// line leases (renewUse) the current one kept alive instead.
func (ls *leases) current(ctx context.Context, ttl time.Duration) (*lease, error) {
	secs := seconds(ttl)
	ls.mu.Lock()
	l := ls.byClass[secs]
	ls.mu.Unlock()
	if l != nil {
		d, dead := l.state()
		// A line lease is kept fresh by the lines' keep-alive loop: a
		// third of ttl left is plenty for a waiter to join on it.
		need := ttl * 2 / 3
		if ls.renewUse {
			need = ttl / 3
		}
		if !dead && time.Until(d) >= need {
			return l, nil
		}
		if !dead && ls.renewUse && time.Until(d) > 0 {
			err := ls.keepAlive(ctx, l, ttl*2/3)
			if err == nil {
				return l, nil
			}
			if !errors.Is(err, ErrLeaseExpired) {
				return nil, err
			}
		}
	}
	return ls.grant(ctx, secs, l)
}

// grant makes a new lease of secs the current one of its length, unless
// the current one changed from was meanwhile.
func (ls *leases) grant(ctx context.Context, secs int64, was *lease) (*lease, error) {
	ls.mu.Lock()
	if l := ls.byClass[secs]; l != was && l != nil && !l.isDead(time.Now()) {
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
	defer ls.mu.Unlock()
	ls.byClass[secs] = l
	ls.byID[l.id] = l
	// Forget leases that ran out a while ago: a lock on one was lost.
	for id, old := range ls.byID {
		if d, _ := old.state(); sent.Sub(d) > time.Minute {
			delete(ls.byID, id)
		}
	}
	return l, nil
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

// validity is how long, from start, a lock of ttl on l may be relied on:
// never more than ttl nor than l's time left, less core's drift margin for
// the lease's whole length.
func (l *lease) validity(ttl time.Duration, start time.Time) time.Duration {
	deadline, _ := l.state()
	margin := drift(max(ttl, time.Duration(l.secs)*time.Second))
	return min(ttl.Truncate(time.Millisecond), deadline.Sub(start)) - margin
}

// drift is core's margin (store.Drift): the store's clock may run a little
// fast, and the answer took a moment to come back.
func drift(d time.Duration) time.Duration { return d/100 + 2*time.Millisecond }
