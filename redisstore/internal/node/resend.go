package node

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
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
// releases leave the marker.

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
// client's retry setting asks, and noting the token when a copy may still
// be on its way.
func (s *Node) sendAcquire(ctx context.Context, sc scriptCall, args []any, token string) *redis.Cmd {
	if s.resend.max <= 0 { // go-redis does not resend either: nothing to note
		return run(ctx, s.d, sc, args)
	}
	for attempt := 1; ; attempt++ {
		cmd := send(ctx, s.d, sc, args, true)
		err := cmd.Err()
		if err == nil || attempt > s.resend.max {
			return cmd
		}
		again, inFlight := resendKind(ctx, err)
		if !again {
			return cmd
		}
		if inFlight {
			s.resent.note(token)
		}
		t := time.NewTimer(s.resend.backoff(attempt))
		select {
		case <-ctx.Done():
			t.Stop()
			return cmd
		case <-t.C:
		}
	}
}

// resentTokens are the tokens whose acquire was sent more than once with a
// copy possibly on its way, until their release.
type resentTokens struct {
	n  atomic.Int64 // len(m): a release reads it without the lock
	mu sync.Mutex
	m  map[string]time.Time // token → when noted
}

// resentKeep is how long a token is remembered without a release: far
// longer than any copy stays on its way.
const resentKeep = 24 * time.Hour

func (r *resentTokens) note(token string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if r.m == nil {
		r.m = map[string]time.Time{}
	}
	for t, at := range r.m {
		if now.Sub(at) > resentKeep {
			delete(r.m, t)
		}
	}
	r.m[token] = now
	r.n.Store(int64(len(r.m)))
}

// has reports whether token's acquire was resent. Without any such token,
// as nearly always, it takes no lock.
func (r *resentTokens) has(token string) bool {
	if r.n.Load() == 0 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.m[token]
	return ok
}

// forget drops token, once its release has left the marker.
func (r *resentTokens) forget(token string) {
	if r.n.Load() == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, token)
	r.n.Store(int64(len(r.m)))
}
