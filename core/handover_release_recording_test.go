package core_test

import (
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/faultproxy"
	"github.com/reqlock/reqlock/internal/redistest"
)

// As TestHandOverResentPollLandingAfterReleaseTakesNothing, but the waiter
// gives the lock up with ReleaseRecording, which is a release as well. Over
// a client that resends, a release leaves the marker of the lock's token
// (README, "Redis client settings"), and release_record.lua must too: the
// first copy of the waiter's resent poll, a plain acquire that does not
// look for the record, lands after it on a free key, and would take it
// under the waiter's name for a whole lease, for nobody.
func TestHandOverResentPollLandingAfterReleaseRecordingTakesNothing(t *testing.T) {
	srv := redistest.Start(t)
	p := faultproxy.Start(t, srv.Addr)
	via, polls := resendingClient(t, p, 300*time.Millisecond)
	direct := srv.Client(t)
	ctx := ctxT(t, 30*time.Second)

	const ttl = 10 * time.Second
	holder := newLocker(core.NewRedisStore(direct), core.WithTTL(ttl))
	waiter := newLocker(core.NewRedisStore(via), core.WithTTL(ttl))
	other := newLocker(core.NewRedisStore(direct), core.WithTTL(ttl))
	skey, _ := holder.StoreKey("k")

	first, err := holder.Obtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	wGot := obtainAsync(ctx, waiter, "k")
	waitFor(t, "the waiter to stand in line", func() bool { return direct.LLen(ctx, skey+":q").Val() == 1 })

	h := p.HoldNext(faultproxy.Upstream)
	t.Cleanup(h.Release)
	heldAcquire(t, h)
	polls.drain()
	// The resent copy is turned away, then the waiter's next poll.
	if !polls.nextPoll(5*time.Second) || !polls.nextPoll(5*time.Second) {
		t.Fatal("the waiter did not poll again")
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	got := <-wGot
	if got.err != nil {
		t.Fatal(got.err)
	}
	if err := got.lk.ReleaseRecording(ctx, []byte("done"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := direct.Exists(ctx, skey).Val(); n != 0 {
		t.Fatalf("the key is still taken after the waiter's release: %q", direct.Get(ctx, skey).Val())
	}

	// The first copy of the held poll lands now, on a free key.
	h.Release()
	settle(t, direct)

	lk2, err := other.TryObtain(ctx, "k")
	if err != nil {
		t.Fatalf("after the waiter released recording, the first copy of one of its resent polls landed and "+
			"took the key for nobody: value %q, PTTL %v; another caller gets %v",
			direct.Get(ctx, skey).Val(), direct.PTTL(ctx, skey).Val(), err)
	}
	_ = lk2.Release(ctx)
}
