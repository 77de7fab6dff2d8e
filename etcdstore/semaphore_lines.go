package etcdstore

import (
	"context"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Waiters for permits (store.PermitLines) stand in a line of their own,
// as keys K/permit-line/<waiter> on their store's line lease, served in
// the order etcd created them, by redisstore's rules: a caller outside the
// line is admitted only while the places left outnumber the waiters, a
// waiter only while fewer waiters stand ahead of it than places are left.
// As in the lock's line (lines.go), nobody polls: the head watches the
// permits, and a release, a cancel or an expiry (a deletion) wakes it;
// every other waiter watches the one ahead of it. A waiter admitted takes
// its line key out in the transaction that puts its permit, which wakes
// the one behind it, so places still left go down the line. A waiter whose
// process died or was paused leaves the line with its line lease
// (LineTTL); one that stops asking while its instance waits for nothing is
// taken out after abandonAfter.

func permitLinePrefix(key string) string      { return key + "/permit-line/" }
func permitLineKey(key, waiter string) string { return permitLinePrefix(key) + waiter }

var _ store.PermitLines = (*Store)(nil)

// AcquirePermitQueued implements store.PermitLines: AcquirePermit for a
// waiter, which joins the line when refused.
func (s *Store) AcquirePermitQueued(ctx context.Context, l store.Lease, limit int, waiter string) (store.Grant, error) {
	return s.acquirePermit(ctx, l, limit, waiter)
}

// LeavePermitLine implements store.PermitLines: one transaction takes the
// waiter's line key out, which wakes the one behind it, and leaves a
// cancel marker for the waiter, so that an attempt of its still on its way
// neither takes a permit nor joins the line again. When it fails, the
// store still takes the line key out in the background, as for the lock's
// line.
func (s *Store) LeavePermitLine(ctx context.Context, key, waiter string) (err error) {
	ctx, done := s.call(ctx)
	defer done()
	w := s.lines.take(waiter)
	defer func() {
		if err != nil {
			s.lines.orphaned(waiter, w)
		}
	}()
	err = s.withPooled(ctx, s.markerTTL, func(id clientv3.LeaseID) error {
		_, err := s.c.Txn(reqCtx(ctx)).Then(
			clientv3.OpDelete(permitLineKey(key, waiter)),
			clientv3.OpPut(permitMarkerKey(key, handedOverToken(waiter)), "", clientv3.WithLease(id)),
		).Commit()
		return err
	})
	if err != nil {
		return s.failure("leave permit line", err)
	}
	return nil
}

// SubscribePermits implements store.PermitLines: the subscriptions of the
// lock's line (Subscribe), for the Semaphore's Locker.
func (s *Store) SubscribePermits(prefix, instance string, wake func(key, waiter string)) store.Subscription {
	return s.Subscribe(prefix, instance, wake)
}

// queuedPermit records that waiter was turned away, standing in key's permit line as kv (its line key lk), and watches what
// it waits for: with pred "" (the head) the permits, of which holders
// were held when it was refused; else pred, the waiter ahead of it, under
// its create revision predRev.
func (ls *lines) queuedPermit(key, waiter, lk string, kv *mvccpb.KeyValue, pred string, predRev int64, holders []*mvccpb.KeyValue) {
	l := ls.s.lineLeases.byLeaseID(clientv3.LeaseID(kv.Lease))
	ctx, stop := context.WithCancel(ls.s.c.Ctx())
	ls.mu.Lock()
	if old := ls.waits[waiter]; old != nil && old.stop != nil {
		old.stop()
	}
	ls.waits[waiter] = &wait{key: key, lk: lk, rev: kv.CreateRevision, lease: l, stop: stop, seen: time.Now()}
	if !ls.keeping {
		ls.keeping = true
		go ls.keepAlive()
	}
	ls.mu.Unlock()
	held := make([]string, len(holders))
	for i, h := range holders {
		held[i] = string(h.Key)
	}
	go ls.watchPermits(ctx, key, waiter, pred, predRev, held)
}

// watchPermits wakes waiter when what it waits for is deleted (see
// queuedPermit), or when the watch fails: it looks for itself then. As
// watch does, it starts at the current revision and reads once it is in
// place, for a deletion in between.
func (ls *lines) watchPermits(ctx context.Context, key, waiter, pred string, predRev int64, held []string) {
	wctx := clientv3.WithRequireLeader(ctx)
	target, opts := pred, []clientv3.OpOption{clientv3.WithCreatedNotify(), clientv3.WithFilterPut()}
	if pred == "" {
		target = permitPrefix(key)
		opts = append(opts, clientv3.WithPrefix())
	}
	wch := ls.s.c.Watch(wctx, target, opts...)
	for resp := range wch {
		if resp.Err() != nil || resp.Canceled {
			break
		}
		if resp.Created {
			if ls.wentBefore(wctx, target, pred == "", predRev, held) {
				break
			}
			continue
		}
		if len(resp.Events) > 0 {
			break
		}
	}
	if ctx.Err() != nil {
		return // stopped: the waiter got a permit, left, or tried again
	}
	ls.wake(key, waiter)
}

// wentBefore reports whether what a waiter waits for went between its
// refusal and its watch: one of the permits held then (head), or the
// waiter ahead of it; or whether the read failed.
func (ls *lines) wentBefore(ctx context.Context, target string, head bool, predRev int64, held []string) bool {
	if !head {
		r, err := ls.s.c.Get(ctx, target)
		return err != nil || len(r.Kvs) == 0 || r.Kvs[0].CreateRevision != predRev
	}
	r, err := ls.s.c.Get(ctx, target, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return true
	}
	now := make(map[string]bool, len(r.Kvs))
	for _, kv := range r.Kvs {
		now[string(kv.Key)] = true
	}
	for _, k := range held {
		if !now[k] {
			return true
		}
	}
	return false
}
