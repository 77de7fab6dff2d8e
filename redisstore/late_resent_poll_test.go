package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/lockertest"
	"github.com/reqlock/reqlock/internal/redistest"
)

// A waiter's poll whose reply timed out is resent by go-redis (MaxRetries,
// 3 by default); the resent copy is turned away and the waiter goes on
// waiting, never told that the first copy is still on its way. The waiter
// then runs under a hand-off ('~' + waiter) without a round trip. When the
// first copy lands, acquire.lua finds '~' + waiter, the hand-off of that
// same waiter: it must leave the lock under that name, or the lock would
// belong to a token nobody holds, for a whole lease, and the waiter that
// runs would be declared lost at its first renewal.
func TestHandOverResentPollTakesNothingFromTheWaiter(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	// Replies time out after 300ms (3s by default) only to keep the test fast.
	s := standInLine(t, ctx, ctx, 300*time.Millisecond, nil)

	// The waiter's next poll is held until go-redis resends it; the resent
	// copy is turned away, then right after the waiter's next regular poll
	// the holder releases.
	h := s.resendHeldPoll(t)
	lk := lockertest.HandOver(t, ctx, s.first, s.got)

	// The first copy of the held poll lands now.
	h.Release()
	redistest.Settle(t, s.direct)

	value := s.direct.Get(ctx, s.skey).Val()
	select {
	case <-lk.Lost():
	case <-time.After(2 * store.HandOffTimeout):
	}
	lost := false
	select {
	case <-lk.Lost():
		lost = true
	default:
	}
	if value != lk.Token() || lost {
		_ = lk.Release(ctx)
		_, oerr := s.other.TryObtain(ctx, "k")
		t.Fatalf("a resent copy of the waiter's earlier poll, landing late, took the lock it runs under: "+
			"store value %q (the waiter's %q), PTTL %v; the waiter's lock lost: %v; "+
			"after the waiter's release another caller gets: %v",
			value, lk.Token(), s.direct.PTTL(ctx, s.skey).Val(), lost, oerr)
	}
}

// A waiter's poll times out and go-redis resends it; the resent copy is
// turned away and the waiter goes on waiting, then runs under a hand-off
// and releases, with Release or with ReleaseRecording. The first copy of
// that poll (a plain acquire, which looks for no record) lands afterwards,
// on a free key: the release's marker must void it, or it takes the lock
// for nobody, for a whole lease.
func TestHandOverResentPollLandingAfterReleaseTakesNothing(t *testing.T) {
	for name, release := range map[string]func(context.Context, *core.Lock) error{
		"Release": func(ctx context.Context, lk *core.Lock) error { return lk.Release(ctx) },
		"ReleaseRecording": func(ctx context.Context, lk *core.Lock) error {
			return lk.ReleaseRecording(ctx, []byte("done"), time.Minute)
		},
	} {
		t.Run(name, func(t *testing.T) { resentPollLandingAfterRelease(t, release) })
	}
}

func resentPollLandingAfterRelease(t *testing.T, release func(context.Context, *core.Lock) error) {
	ctx := ctxT(t, 30*time.Second)
	s := standInLine(t, ctx, ctx, 300*time.Millisecond, nil)
	h := s.resendHeldPoll(t)
	if err := s.first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := release(ctx, s.waiterGot(t)); err != nil {
		t.Fatal(err)
	}
	s.released(t, ctx)
	h.Release() // the first copy of the held poll lands now, on a free key
	s.freeForOthers(t, ctx, "after the waiter released, the first copy of one of its resent polls")
}
