package node

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core/store"
)

// A client with MaxRetries above 0 sends a command again when its reply was
// lost. For an acquire that matters: the first copy may still be on its
// way, take the lock again after its holder released it, and keep it for
// nobody for a whole lease. The release of such a lock leaves the token's
// cancel marker, which makes that copy give the lock back when it lands
// (acquire.lua). A marker costs the server a write on every release, yet a
// copy can be on its way only when a send failed. So the store sends its
// acquires with go-redis's own resending off (onceCmd), resends them itself
// as the client would have, and remembers the tokens it resent: only their
// releases leave the marker. A resent attempt that took nothing leaves its
// marker at once (voidRefused), since nobody will release it.

// resendPolicy is the client's retry setting, which the store's own
// resending follows.
type resendPolicy struct {
	max        int           // resends after the first send; 0: never
	minBackoff time.Duration // the pause before a resend grows from this
	maxBackoff time.Duration // ... up to this
}

// resendPolicyOf reads c's retry options (after go-redis filled in its
// defaults); ok is false for a client of a type it cannot inspect, which
// may resend on its own whatever a command says.
func resendPolicyOf(c redis.UniversalClient) (p resendPolicy, ok bool) {
	switch c := c.(type) {
	case *redis.Client:
		o := c.Options()
		return resendPolicy{o.MaxRetries, o.MinRetryBackoff, o.MaxRetryBackoff}, true
	case *redis.ClusterClient:
		o := c.Options()
		return resendPolicy{o.MaxRetries, o.MinRetryBackoff, o.MaxRetryBackoff}, true
	case *redis.Ring:
		o := c.Options()
		return resendPolicy{o.MaxRetries, o.MinRetryBackoff, o.MaxRetryBackoff}, true
	}
	return resendPolicy{}, false
}

// backoff is the pause before resend number attempt (1, 2, ...):
// exponential from minBackoff, capped at maxBackoff, with jitter.
func (p resendPolicy) backoff(attempt int) time.Duration {
	if p.minBackoff <= 0 {
		return 0
	}
	d := p.minBackoff << min(attempt-1, 16)
	if p.maxBackoff > 0 && (d > p.maxBackoff || d <= 0) {
		d = p.maxBackoff
	}
	return d/2 + rand.N(d/2+1)
}

// resendKind says whether a failed send is sent again, and whether a copy
// of it may still be on its way.
func resendKind(ctx context.Context, err error) (again, inFlight bool) {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, redis.ErrClosed) {
		return false, false
	}
	var reply redis.Error
	if errors.As(err, &reply) {
		// Redis answered: this copy is done. These answers say it did not
		// run, and go-redis would have sent it again.
		for _, prefix := range [...]string{"LOADING", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "READONLY"} {
			if replyIs(err, prefix) {
				return true, false
			}
		}
		return false, false
	}
	// No answer (a timeout, a connection that broke): it may have been
	// sent, and may still land.
	return true, true
}

// sendAcquire sends an acquire script call for token, resending it as the
// client's retry setting asks. resent reports whether a copy of it may
// still be on its way, and then the token is noted: the store resent it
// after a send that got no answer, or a Cluster redirect handed it to the
// cluster client's own loop, which sends a command again after a read
// timeout whatever MaxRetries says.
func (s *Node) sendAcquire(ctx context.Context, sc scriptCall, args []any, token string) (cmd *redis.Cmd, resent bool) {
	if s.resend.max <= 0 { // go-redis does not resend either, but for a redirect
		cmd, looped := send(ctx, s.d, sc, args, false)
		if looped {
			s.resent.note(token)
		}
		// A client of a type the store cannot inspect may have resent it
		// unseen: its releases all mark (markAlways), and so do its
		// attempts that took nothing.
		return cmd, looped || s.markAlways
	}
	for attempt := 1; ; attempt++ {
		cmd, looped := send(ctx, s.d, sc, args, true)
		err := cmd.Err()
		if looped || (err != nil && attempt <= s.resend.max && resentCopy(ctx, err)) {
			if !resent {
				s.resent.note(token)
				resent = true
			}
		}
		if err == nil || attempt > s.resend.max {
			return cmd, resent
		}
		if again, _ := resendKind(ctx, err); !again || !s.pause(ctx, attempt) {
			return cmd, resent
		}
	}
}

// resentCopy reports whether a failed send is sent again while a copy of
// it may still be on its way.
func resentCopy(ctx context.Context, err error) bool {
	again, inFlight := resendKind(ctx, err)
	return again && inFlight
}

// pause waits before resend number attempt; false when ctx ended first.
func (s *Node) pause(ctx context.Context, attempt int) bool {
	t := time.NewTimer(s.resend.backoff(attempt))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// voidRefused settles an attempt that a copy may outlive (resent) and that
// took nothing: the key was taken, or its record was there. The Locker does
// nothing more with such an answer, yet the copy still on its way would
// take the key when it lands after the holder's release, for nobody. So the
// store leaves the token's cancel marker now (Cancel), before it answers;
// if that fails, the answer is the error, and the caller takes the token
// back as for any acquire whose outcome is unknown.
//
// A wait's attempts all carry the waiter's name (store.HandedOverToken),
// which must not be voided while the wait goes on: its token stays noted,
// and the wait's Leave or Release leaves the marker.
func (s *Node) voidRefused(ctx context.Context, l store.Lease, waiter string, a acquireAnswer, resent bool, err error) (acquireAnswer, error) {
	if !resent || err != nil || a.fence != 0 {
		return a, err
	}
	if waiter != "" && l.Token == store.HandedOverToken(waiter) {
		return a, nil
	}
	if cerr := s.Cancel(ctx, l); cerr != nil {
		return acquireAnswer{}, fmt.Errorf("%w: %w", errUnvoided, cerr)
	}
	return a, nil
}

// errUnvoided: an attempt that was refused may still land, and its cancel
// marker could not be left.
var errUnvoided = errors.New("reqlock: acquire: refused, but a copy sent earlier may still land and could not be voided")

// resentTokens are the tokens whose acquire may have a copy on its way,
// until their release, cancel or leave leaves the marker. It holds at most
// resentCap of them: past that it drops the oldest, and for resentKeep
// after that every token counts as noted (has), since the one asked about
// may be one of those dropped. Erring towards the marker is always safe.
type resentTokens struct {
	n    atomic.Int64 // len(m): has and forget read it without the lock
	lost atomic.Int64 // when a token was last dropped, in Unix ns; 0: never
	mu   sync.Mutex
	m    map[string]*list.Element // token → its place in order
	// order holds the tokens oldest first, for dropping the oldest.
	order list.List
}

// resentCap bounds the tokens remembered. Each is a token whose acquire
// got no answer and was sent again, not yet released: thousands at once
// mean a link lost for a long while.
const resentCap = 4096

// resentKeep is how long, after a token was dropped to stay within
// resentCap, every release leaves the marker: far longer than a lock is
// commonly held.
const resentKeep = 24 * time.Hour

// note remembers token, in O(1).
func (r *resentTokens) note(token string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]*list.Element{}
	}
	if _, ok := r.m[token]; ok {
		return
	}
	if len(r.m) >= resentCap {
		oldest := r.order.Front()
		delete(r.m, r.order.Remove(oldest).(string))
		r.lost.Store(time.Now().UnixNano())
	}
	r.m[token] = r.order.PushBack(token)
	r.n.Store(int64(len(r.m)))
}

// has reports whether token's acquire may have a copy on its way. Without
// any such token, as nearly always, it takes no lock.
func (r *resentTokens) has(token string) bool {
	if lost := r.lost.Load(); lost != 0 && time.Since(time.Unix(0, lost)) < resentKeep {
		return true
	}
	if r.n.Load() == 0 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.m[token]
	return ok
}

// forget drops token, once its marker is left (or it needs none).
func (r *resentTokens) forget(token string) {
	if r.n.Load() == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.m[token]; ok {
		r.order.Remove(e)
		delete(r.m, token)
		r.n.Store(int64(len(r.m)))
	}
}
