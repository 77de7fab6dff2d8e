package etcdstore

import (
	"context"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// heldLocks are the locks this store granted and has not seen end, by
// token: their keys and fences for Guard, their leases for Extend, and the
// moment each runs out if it is not renewed.
//
// etcd's leases are whole seconds, and locks share them, so a lock's lease
// may outlast its TTL by up to a second and more. The store deletes a lock
// that reaches its TTL unrenewed itself, with a transaction that checks
// its token: a TTL below a second, or one not on a second, is honoured as
// long as the holder's process runs (the holder stopped relying on the
// lock before, by its validity). If that process is gone, the lease ends
// the lock when it runs out.
type heldLocks struct {
	s  *Store
	mu sync.Mutex
	m  map[string]*heldLock
}

type heldLock struct {
	key    string
	fence  int64
	lease  *lease
	ttl    time.Duration
	expiry time.Time   // by our clock: the end of its last grant or renewal
	timer  *time.Timer // deletes it at expiry
	gone   bool        // deleted at expiry: never renewed again
	// inLine: the lock is held by heading the line, under the waiter's
	// line key (key), whose create revision is the fence.
	inLine bool
}

// add records a lock granted (or renewed) from start on.
func (h *heldLocks) add(token, key string, fence int64, l *lease, ttl time.Duration, start time.Time, inLine bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = make(map[string]*heldLock)
	}
	if old := h.m[token]; old != nil && old.timer != nil {
		old.timer.Stop()
	}
	hl := &heldLock{key: key, fence: fence, lease: l, ttl: ttl, expiry: start.Add(ttl), inLine: inLine}
	hl.timer = time.AfterFunc(ttl, func() { h.expire(token, hl) })
	h.m[token] = hl
}

// renewed moves the lock's expiry to ttl from start, and reports whether
// it was still held here: false once its expiry deleted it, or is doing so.
// A lock this store did not grant (another Store on the same client, say)
// is taken in.
func (h *heldLocks) renewed(token, key string, fence int64, l *lease, ttl time.Duration, start time.Time) bool {
	h.mu.Lock()
	hl := h.m[token]
	if hl == nil {
		h.mu.Unlock()
		h.add(token, key, fence, l, ttl, start, false)
		return true
	}
	defer h.mu.Unlock()
	if hl.gone {
		return false
	}
	hl.lease, hl.ttl = l, ttl
	if until := start.Add(ttl); until.After(hl.expiry) {
		hl.expiry = until
		hl.timer.Reset(time.Until(until))
	}
	return true
}

func (h *heldLocks) forget(token string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if hl := h.m[token]; hl != nil {
		hl.timer.Stop()
		delete(h.m, token)
	}
}

func (h *heldLocks) get(token string) (heldLock, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	hl := h.m[token]
	if hl == nil {
		return heldLock{}, false
	}
	return *hl, true
}

// expire deletes the lock of token if it reached its expiry unrenewed. It
// is forgotten first, under the mutex, so that a renewal that comes after
// reports the lock not held rather than renew what is being deleted.
func (h *heldLocks) expire(token string, hl *heldLock) {
	h.mu.Lock()
	if h.m[token] != hl || hl.gone {
		h.mu.Unlock()
		return
	}
	if left := time.Until(hl.expiry); left > 0 {
		hl.timer.Reset(left)
		h.mu.Unlock()
		return
	}
	// Remembered a while as gone, so that a renewal on its way is refused.
	hl.gone = true
	hl.timer = time.AfterFunc(time.Minute, func() { h.drop(token, hl) })
	h.mu.Unlock()
	ctx, cancel := context.WithTimeout(h.s.c.Ctx(), expireTimeout)
	defer cancel()
	// A failure leaves the lock to its lease.
	_, _ = h.s.c.Txn(reqCtx(ctx)).If(hl.cmp(token)).Then(clientv3.OpDelete(hl.key)).Commit()
}

// expireTimeout bounds the deletion of a lock that ran out.
const expireTimeout = 3 * time.Second

// drop forgets hl, gone a while ago, unless token was granted again.
func (h *heldLocks) drop(token string, hl *heldLock) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m[token] == hl {
		delete(h.m, token)
	}
}

// cmp holds while hl is held by token: its value is the token, or, for a
// lock held by heading the line, the line key still has the fence as its
// create revision (the head holds until it leaves the line).
func (hl heldLock) cmp(token string) clientv3.Cmp {
	if hl.inLine {
		return clientv3.Compare(clientv3.CreateRevision(hl.key), "=", hl.fence)
	}
	return clientv3.Compare(clientv3.Value(hl.key), "=", token)
}

// holds returns the comparison that holds while token holds key's lock,
// and the key the lock is on: key itself, or the line key of a waiter
// that holds it by heading the line.
func (s *Store) holds(key, token string) (clientv3.Cmp, string) {
	if h, ok := s.held.get(token); ok && h.inLine {
		return h.cmp(token), h.key
	}
	return clientv3.Compare(clientv3.Value(key), "=", token), key
}
