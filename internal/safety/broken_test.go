package safety

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// Deliberately broken locks. Each runs a workload the real lock passes, and
// the checkers must catch the breakage: a green table means something only
// if these rows say "caught".

// ignoresNX takes the lock whoever holds it: an acquire without NX.
type ignoresNX struct {
	core.Store
	rc *redis.Client
}

func (s ignoresNX) Acquire(ctx context.Context, l store.Lease) (store.Grant, error) {
	g, err := s.Store.Acquire(ctx, l)
	if errors.Is(err, core.ErrNotObtained) {
		if err := s.rc.Del(ctx, l.Key).Err(); err != nil {
			return store.Grant{}, err
		}
		return s.Store.Acquire(ctx, l)
	}
	return g, err
}

// blindRelease deletes the key without comparing the token: a holder that
// lost its lock frees its successor's.
type blindRelease struct {
	core.Store
	rc *redis.Client
}

func (s blindRelease) Release(ctx context.Context, key, _ string) error {
	return s.rc.Del(ctx, key).Err()
}

// inflated trusts each grant and renewal k times longer than the store
// said: a watchdog that trusts one renewal too long.
type inflated struct {
	core.Store
	k time.Duration
}

func (s inflated) Acquire(ctx context.Context, l store.Lease) (store.Grant, error) {
	g, err := s.Store.Acquire(ctx, l)
	g.Validity *= s.k
	return g, err
}

func (s inflated) Extend(ctx context.Context, ls []store.Lease) []store.Renewal {
	rs := s.Store.Extend(ctx, ls)
	for i := range rs {
		rs[i].Validity *= s.k
	}
	return rs
}

// With NX gone every worker takes the lock at will, and the account does
// not check fences: overlaps, stale writes and lost updates all show.
func brokenIgnoresNX(t *testing.T) {
	srv := redistest.Start(t)
	r := newRun(t, false)
	for range 3 {
		rc := client(t, srv.Addr)
		r.worker(locker(ignoresNX{redisstore.New(rc), rc}, time.Second), RandomPause(2*time.Millisecond))
	}
	r.start()
	r.finish("acquire ignores NX; account skips the fence check", "redis", expect{
		overlap: must, stale: must, lostUpd: must, lateLost: may, broken: true})
}

// Holders overrun their lease as in redis/holder-overruns-lease, which the
// real lock passes; here the late holder's release deletes its
// successor's lock and a third worker walks in.
func brokenBlindRelease(t *testing.T) {
	srv := redistest.Start(t)
	r := newRun(t, true)
	const ttl = 200 * time.Millisecond
	for range 4 {
		rc := client(t, srv.Addr)
		r.worker(noWatchdog(blindRelease{redisstore.New(rc), rc}, ttl), overrun(ttl, 3))
	}
	r.start()
	r.finish("release deletes without the token check", "redis", expect{
		overlap: must, refused: may, lateLost: may, broken: true})
}

// A holder is cut off from Redis (every byte dropped) while it holds the
// lock, as in proxy/drop, which the real lock passes; here it trusts its
// lease four times too long and hears of the loss long after the other
// worker took over.
func brokenInflatedValidity(t *testing.T) {
	srv := redistest.Start(t)
	r := newRun(t, true)
	const ttl = 300 * time.Millisecond
	p := faultproxy.Start(t, srv.Addr)
	a := r.worker(locker(inflated{redisstore.New(client(t, p.Addr())), 4}, ttl), longHold(ttl))
	r.worker(locker(redisstore.New(client(t, srv.Addr)), ttl), RandomPause(2*time.Millisecond))
	r.start()
	r.faultsUntilDone(func() { cutOff(r, p, a, 2*ttl) })
	r.finish("watchdog trusts a renewal 4× too long", "redis", expect{
		overlap: must, lateLost: must, refused: may, broken: true})
}
