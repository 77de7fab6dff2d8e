package core_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/faultproxy"
	"github.com/reqlock/reqlock/internal/redistest"
)

// resendingClient is a client through p that resends a command whose reply
// timed out (go-redis's default MaxRetries), with replies timing out after
// readTimeout; answered polls of a waiter are reported on polls.
func resendingClient(t *testing.T, p *faultproxy.Proxy, readTimeout time.Duration) (*redis.Client, *answeredPolls) {
	t.Helper()
	opts := redistest.ClientOptions(p.Addr())
	opts.MaxRetries = 3
	opts.ReadTimeout = readTimeout
	via := redis.NewClient(opts)
	t.Cleanup(func() { _ = via.Close() })
	polls := newAnsweredPolls()
	via.AddHook(polls)
	if err := via.Ping(ctxT(t, 5*time.Second)).Err(); err != nil {
		t.Fatal(err)
	}
	return via, polls
}

// heldAcquire waits for h to capture a waiter's acquire and for the client
// to give up on its connection (it then resends the command elsewhere).
func heldAcquire(t *testing.T, h *faultproxy.Held) {
	t.Helper()
	select {
	case <-h.Captured():
	case <-time.After(5 * time.Second):
		t.Fatal("no command was held")
	}
	if b := h.Bytes(); !bytes.Contains(b, []byte("evalsha")) || !bytes.Contains(b, []byte(":q")) {
		t.Fatalf("held %q, want a waiter's acquire", b)
	}
	select {
	case <-h.Conn().ClientClosed():
	case <-time.After(5 * time.Second):
		t.Fatal("the client kept the connection of the held command")
	}
}

// A Locker without the watchdog claims a hand-off with an acquire. Its
// claim's reply times out and go-redis resends it; the resent copy finds
// '~' + waiter and the waiter holds the lock under that name. Over a client
// that resends, a release leaves a cancel marker for the lock's token so
// that a late first copy of its acquire takes nothing (README, "Redis
// client settings"). The first copy of the claim lands after the release,
// on a free key: the marker must void it, or it takes the lock for nobody,
// for a whole lease.
func TestHandOverResentClaimLandingAfterReleaseTakesNothing(t *testing.T) {
	srv := redistest.Start(t)
	p := faultproxy.Start(t, srv.Addr)
	// Shorter than HandOffTimeout: the resent claim lands within the
	// hand-off and finds '~' + waiter.
	via, polls := resendingClient(t, p, 60*time.Millisecond)
	direct := srv.Client(t)
	ctx := ctxT(t, 30*time.Second)

	const ttl = 10 * time.Second
	holder := newLocker(core.NewRedisStore(direct), core.WithTTL(ttl))
	waiter := newLocker(core.NewRedisStore(via), core.WithTTL(ttl), core.WithoutWatchdog())
	other := newLocker(core.NewRedisStore(direct), core.WithTTL(ttl))
	skey, _ := holder.StoreKey("k")

	first, err := holder.Obtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	polls.drain()
	wGot := obtainAsync(ctx, waiter, "k")
	waitFor(t, "the waiter to stand in line", func() bool { return direct.LLen(ctx, skey+":q").Val() == 1 })
	// Right after an answered poll, so that the next command of the waiter
	// is its claim of the hand-off, not its next poll.
	if !polls.nextPoll(5 * time.Second) {
		t.Fatal("the waiter did not poll")
	}
	h := p.HoldNext(faultproxy.Upstream)
	t.Cleanup(h.Release)
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	heldAcquire(t, h)

	got := <-wGot
	if got.err != nil {
		t.Fatal(got.err)
	}
	lk := got.lk
	if !strings.HasPrefix(lk.Token(), "~") {
		t.Logf("the waiter holds the lock under its claim's token %q", lk.Token())
	}
	if err := lk.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if n := direct.Exists(ctx, skey).Val(); n != 0 {
		t.Fatalf("the key is still taken after the waiter's release: %q", direct.Get(ctx, skey).Val())
	}

	// The first copy of the claim lands now, on a free key.
	h.Release()
	settle(t, direct)

	lk2, err := other.TryObtain(ctx, "k")
	if err != nil {
		t.Fatalf("after the waiter released, the first copy of its resent claim landed and took the key "+
			"for nobody: value %q, PTTL %v; another caller gets %v",
			direct.Get(ctx, skey).Val(), direct.PTTL(ctx, skey).Val(), err)
	}
	_ = lk2.Release(ctx)
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
	if err := release(ctx, got.lk); err != nil {
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
		t.Fatalf("after the waiter released, the first copy of one of its resent polls landed and took the key "+
			"for nobody: value %q, PTTL %v; another caller gets %v",
			direct.Get(ctx, skey).Val(), direct.PTTL(ctx, skey).Val(), err)
	}
	_ = lk2.Release(ctx)
}
