package etcdstore

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Waiters stand in a key's line as keys K/line/<waiter> on their store's
// line lease, served in the order etcd created them (create revision), as
// in ZooKeeper's lock recipe: each watches only the one ahead of it, the
// head watches the lock, and a deletion wakes only the one behind. The
// head holds the lock once the lock's key is gone, and takes it with a
// read (head.go). A waiter whose process died leaves the line when its
// line lease runs out.

// handedOverToken is the token under which core's Locker has every attempt
// of one wait run when the store hands locks over (store.HandedOverToken):
// a Leave frees a lock held under it.
func handedOverToken(waiter string) string { return "~" + waiter }

// lines are this store's waiters, the subscriptions that hear of their
// turn, and the keep-alive of the leases they stand in line on.
type lines struct {
	s *Store

	mu      sync.Mutex
	subs    map[string]*sub  // by instance
	waits   map[string]*wait // by waiter
	orphans []orphan         // line keys to take out, retried by the keep-alive loop
	keeping bool             // the keep-alive loop runs
	kick    chan struct{}    // cap 1: waits changed
}

// sub is one instance's subscription: while a wait holds it, that
// instance's waiters are alive.
type sub struct {
	wake    func(key, waiter string)
	holders int
}

// abandonAfter is how long a waiter may go without an attempt, while
// nothing of its instance holds the subscription, before the store takes
// it out of line itself: a waiter that stopped without leaving (its caller
// never came back) would otherwise stand at the head on the store's lease,
// which stays alive for the others, and keep the key from everyone.
const abandonAfter = time.Second

// orphan is a line key whose waiter is gone from this store (its Leave
// failed, or it was abandoned) but whose deletion has not committed: left
// where it stands, it would head the line on a lease the store keeps alive
// for its other waiters. It is retried until it commits or its lease can
// no longer be alive, which takes the key with it: so for no longer than
// the store's other waiters keep that lease alive.
type orphan struct {
	key, waiter string
	lk          string // its line key
	rev         int64
	lease       *lease
}

// wait is one waiter of this store standing in a key's line.
type wait struct {
	key   string
	lk    string // its line key: in the lock's line, or a permit line
	rev   int64  // create revision of its line key
	lease *lease
	stop  context.CancelFunc // ends its watch
	seen  time.Time          // its last attempt
}

func (ls *lines) init(s *Store) {
	ls.s = s
	ls.subs = make(map[string]*sub)
	ls.waits = make(map[string]*wait)
	ls.kick = make(chan struct{}, 1)
}

// rev is the create revision of waiter's line key for key, 0 if it has not
// joined (or not this key's line).
func (ls *lines) rev(waiter, key string) int64 {
	if waiter == "" {
		return 0
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if w := ls.waits[waiter]; w != nil && w.key == key {
		return w.rev
	}
	return 0
}

// place is the create revision of waiter's line key for key and the lease
// it stands on (rev 0 if it has not joined).
func (ls *lines) place(waiter, key string) (int64, *lease) {
	if waiter == "" {
		return 0, nil
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if w := ls.waits[waiter]; w != nil && w.key == key {
		return w.rev, w.lease
	}
	return 0, nil
}

// alive fails with ErrLeaseExpired when waiter stands in line on a lease
// that etcd expired, or may have: its place went with it.
func (ls *lines) alive(waiter string, now time.Time) error {
	ls.mu.Lock()
	w := ls.waits[waiter]
	ls.mu.Unlock()
	if w != nil && w.lease != nil && w.lease.isDead(now) {
		return fmt.Errorf("%w: the waiter's place in line went with it", ErrLeaseExpired)
	}
	return nil
}

// queued records that waiter was turned away at revision at, standing in
// line (lineKVs, in create order, holds its key unless a cancel marker kept
// it out), and watches the one ahead of it: the waiter before it, or the
// lock itself for the head.
func (ls *lines) queued(waiter, key, lk string, holder *mvccpb.KeyValue, lineKVs []*mvccpb.KeyValue, at int64) {
	pred, rev, leaseID := "", int64(0), clientv3.NoLease
	for i, kv := range lineKVs {
		if string(kv.Key) == lk {
			rev, leaseID = kv.CreateRevision, clientv3.LeaseID(kv.Lease)
			if i == 0 {
				pred = key
			} else {
				pred = string(lineKVs[i-1].Key)
			}
			break
		}
	}
	if rev == 0 {
		return
	}
	predGone := pred == key && holder == nil
	l := ls.s.lineLeases.byLeaseID(leaseID)

	ctx, stop := context.WithCancel(ls.s.c.Ctx())
	ls.mu.Lock()
	if old := ls.waits[waiter]; old != nil && old.stop != nil {
		old.stop()
	}
	ls.waits[waiter] = &wait{key: key, lk: lk, rev: rev, lease: l, stop: stop, seen: time.Now()}
	if !ls.keeping {
		ls.keeping = true
		go ls.keepAlive()
	}
	ls.mu.Unlock()
	if predGone {
		// The head, and the lock was free: try again at once.
		stop()
		ls.wake(key, waiter)
		return
	}
	go ls.watch(ctx, key, waiter, pred, at+1)
}

// watch wakes waiter when pred is deleted, or when the watch fails (a
// lost leader, a compaction): it looks for itself then. The watch starts
// at the current revision, not at the attempt's: etcd serves a watch that
// starts in the past from a loop that runs every 100ms, which would delay
// the wake-up by as much. A deletion between the attempt and the watch is
// caught by reading pred once the watch is in place.
func (ls *lines) watch(ctx context.Context, key, waiter, pred string, from int64) {
	wctx := clientv3.WithRequireLeader(ctx)
	wch := ls.s.c.Watch(wctx, pred, clientv3.WithCreatedNotify(), clientv3.WithFilterPut())
	for resp := range wch {
		if resp.Err() != nil || resp.Canceled {
			break
		}
		if resp.Created {
			r, err := ls.s.c.Get(wctx, pred)
			if err != nil || len(r.Kvs) == 0 || r.Kvs[0].CreateRevision >= from {
				break // gone (or taken anew) since the attempt
			}
			continue
		}
		if len(resp.Events) > 0 {
			break
		}
	}
	if ctx.Err() != nil {
		return // stopped: the waiter got the lock, left, or tried again
	}
	ls.wake(key, waiter)
}

// wake tells waiter's subscription that it is its turn.
func (ls *lines) wake(key, waiter string) {
	instance, _, _ := strings.Cut(waiter, "/")
	ls.mu.Lock()
	sb := ls.subs[instance]
	ls.mu.Unlock()
	if sb != nil {
		sb.wake(key, waiter)
	}
}

// done forgets waiter: it got the lock, or left.
func (ls *lines) done(waiter string) { ls.take(waiter) }

// take forgets waiter and returns what it was, or nil.
func (ls *lines) take(waiter string) *wait {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	w := ls.waits[waiter]
	if w != nil {
		if w.stop != nil {
			w.stop()
		}
		delete(ls.waits, waiter)
		ls.kickLocked()
	}
	return w
}

// orphaned hands the line key of waiter's wait w to the keep-alive loop,
// which takes it out of line.
func (ls *lines) orphaned(waiter string, w *wait) {
	if w == nil || w.rev == 0 {
		return
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.orphans = append(ls.orphans, orphan{w.key, waiter, w.lk, w.rev, w.lease})
	if !ls.keeping {
		ls.keeping = true
		go ls.keepAlive()
	}
	ls.kickLocked()
}

func (ls *lines) kickLocked() {
	select {
	case ls.kick <- struct{}{}:
	default:
	}
}

// dropOrphans tries once to take every orphan out of line, and keeps those
// it could not while their lease may still be alive.
func (ls *lines) dropOrphans(more []orphan) {
	ls.mu.Lock()
	todo := append(ls.orphans, more...)
	ls.orphans = nil
	ls.mu.Unlock()
	var left []orphan
	for _, o := range todo {
		if ls.s.dropFromLine(o.lk, o.rev) == nil {
			continue
		}
		// A lease this store does not know, it does not keep alive: the
		// key runs out with it.
		if o.lease != nil && !o.lease.isDead(time.Now()) {
			left = append(left, o)
		}
	}
	if len(left) > 0 {
		ls.mu.Lock()
		ls.orphans = append(ls.orphans, left...)
		ls.mu.Unlock()
	}
}

// keepAlive keeps the leases of this store's waiters alive while any
// stands in line, a third of the way through each; a lease etcd expired
// wakes its waiters, whose next attempt says so (ErrLeaseExpired). It
// returns once nobody waits.
func (ls *lines) keepAlive() {
	for {
		ls.mu.Lock()
		if len(ls.waits) == 0 && len(ls.orphans) == 0 {
			ls.keeping = false
			ls.mu.Unlock()
			return
		}
		leases := make(map[*lease][]string)
		var abandoned []orphan
		now := time.Now()
		for id, w := range ls.waits {
			instance, _, _ := strings.Cut(id, "/")
			if sb := ls.subs[instance]; (sb == nil || sb.holders == 0) && now.Sub(w.seen) > abandonAfter {
				abandoned = append(abandoned, orphan{w.key, id, w.lk, w.rev, w.lease})
				if w.stop != nil {
					w.stop()
				}
				delete(ls.waits, id)
				continue
			}
			if w.lease != nil {
				leases[w.lease] = append(leases[w.lease], id)
			}
		}
		ls.mu.Unlock()
		ls.dropOrphans(abandoned)
		next := abandonAfter / 2
		ls.mu.Lock()
		if len(ls.orphans) > 0 {
			next = abandonAfter / 10
		}
		ls.mu.Unlock()
		for l, waiters := range leases {
			length := time.Duration(l.secs) * time.Second
			ctx, cancel := context.WithTimeout(ls.s.c.Ctx(), length/3)
			err := ls.s.lineLeases.keepAlive(ctx, l, length*2/3)
			cancel()
			if l.isDead(time.Now()) {
				for _, w := range waiters {
					ls.mu.Lock()
					key := ""
					if ww := ls.waits[w]; ww != nil {
						key = ww.key
					}
					ls.mu.Unlock()
					ls.wake(key, w)
				}
				continue
			}
			gap := length / 3
			if err != nil {
				gap = length / 10
			}
			next = min(next, gap)
		}
		t := time.NewTimer(next)
		select {
		case <-t.C:
		case <-ls.kick:
			t.Stop()
		case <-ls.s.c.Ctx().Done():
			t.Stop()
			ls.mu.Lock()
			ls.keeping = false
			ls.mu.Unlock()
			return
		}
	}
}

// Subscribe implements store.Waker: wake is called with the key and the
// waiter when the one ahead of the waiter in line is gone. Nothing is
// opened here: each waiter's watch starts at the revision of its own
// attempt, so a release after that attempt is never missed.
func (s *Store) Subscribe(_, instance string, wake func(key, waiter string)) store.Subscription {
	s.lines.mu.Lock()
	defer s.lines.mu.Unlock()
	sb := s.lines.subs[instance]
	if sb == nil {
		sb = &sub{}
		s.lines.subs[instance] = sb
	}
	sb.wake = wake
	return subscription{ls: &s.lines, sb: sb}
}

// subscription counts its holders: a held one keeps its instance's
// waiters in line however long they go between attempts.
type subscription struct {
	ls *lines
	sb *sub
}

func (u subscription) Hold(context.Context) (func(), error) {
	u.ls.mu.Lock()
	u.sb.holders++
	u.ls.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			u.ls.mu.Lock()
			u.sb.holders--
			u.ls.mu.Unlock()
		})
	}, nil
}

// dropFromLine takes a waiter out of a line, if its line key lk still
// stands there under revision rev, and so frees the lock if it held it as
// the head.
func (s *Store) dropFromLine(lk string, rev int64) error {
	ctx, cancel := context.WithTimeout(s.c.Ctx(), abandonAfter)
	defer cancel()
	_, err := s.c.Txn(reqCtx(ctx)).
		If(clientv3.Compare(clientv3.CreateRevision(lk), "=", rev)).
		Then(clientv3.OpDelete(lk)).
		Commit()
	return err
}

// AcquireQueued implements store.Waker: Acquire for a waiter, who joins the
// line when turned away, in the same transaction.
func (s *Store) AcquireQueued(ctx context.Context, l store.Lease, waiter string, withRecord bool) (store.Grant, []byte, error) {
	return s.acquire(ctx, l, waiter, withRecord)
}

// Leave implements store.Waker: one transaction takes waiter out of the
// line, frees a lock held under its name, and leaves a cancel marker for
// its name, so that an attempt of its still on its way takes nothing.
// When it fails, the store still takes the waiter's line key out, in the
// background: it stands on a lease the store keeps alive for its other
// waiters, who would otherwise wait behind it.
func (s *Store) Leave(ctx context.Context, key, waiter string) (err error) {
	ctx, done := s.call(ctx)
	defer done()
	w := s.lines.take(waiter)
	defer func() {
		if err != nil {
			s.lines.orphaned(waiter, w)
		}
	}()
	ml, err := s.pools.get(ctx, s.markerTTL)
	if err != nil {
		return err
	}
	tok := handedOverToken(waiter)
	_, err = s.c.Txn(reqCtx(ctx)).Then(
		clientv3.OpDelete(lineKey(key, waiter)),
		clientv3.OpPut(markerKey(key, tok), "", clientv3.WithLease(ml)),
		clientv3.OpTxn([]clientv3.Cmp{clientv3.Compare(clientv3.Value(key), "=", tok)}, []clientv3.Op{clientv3.OpDelete(key)}, nil),
	).Commit()
	if err != nil {
		return s.failure("leave", err)
	}
	s.held.forget(tok)
	return nil
}
