package core_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/faultproxy"
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
	srv := redistest.Start(t)
	p := faultproxy.Start(t, srv.Addr)
	opts := redistest.ClientOptions(p.Addr())
	opts.MaxRetries = 3                       // go-redis's default
	opts.ReadTimeout = 300 * time.Millisecond // default 3s; shorter only to keep the test fast
	via := redis.NewClient(opts)
	t.Cleanup(func() { _ = via.Close() })
	polls := newAnsweredPolls()
	via.AddHook(polls)
	direct := srv.Client(t)
	ctx := ctxT(t, 30*time.Second)
	if err := via.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}

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

	// Hold the waiter's next poll; go-redis gives up on it after its
	// ReadTimeout and resends it on a new connection.
	h := p.HoldNext(faultproxy.Upstream)
	t.Cleanup(h.Release)
	select {
	case <-h.Captured():
	case <-time.After(5 * time.Second):
		t.Fatal("no poll was held")
	}
	if b := h.Bytes(); !bytes.Contains(b, []byte("evalsha")) || !bytes.Contains(b, []byte(":q")) {
		t.Fatalf("held %q, want the waiter's acquire", b)
	}
	select {
	case <-h.Conn().ClientClosed():
	case <-time.After(5 * time.Second):
		t.Fatal("the client kept the connection of the held poll")
	}
	polls.drain()
	// The resent copy is answered (turned away), then the waiter's next
	// regular poll; right after that one the holder releases.
	if !polls.nextPoll(5*time.Second) || !polls.nextPoll(5*time.Second) {
		t.Fatal("the waiter did not poll again")
	}
	lk := handOver(t, ctx, first, wGot)
	if !strings.HasPrefix(lk.Token(), "~") {
		t.Logf("the waiter claimed the hand-off with its own token %q", lk.Token())
	}

	// The first copy of the held poll lands now.
	h.Release()
	settle(t, direct)

	value := direct.Get(ctx, skey).Val()
	select {
	case <-lk.Lost():
	case <-time.After(2 * core.HandOffTimeout):
	}
	lost := false
	select {
	case <-lk.Lost():
		lost = true
	default:
	}
	if value != lk.Token() || lost {
		_ = lk.Release(ctx)
		_, oerr := other.TryObtain(ctx, "k")
		t.Fatalf("a resent copy of the waiter's earlier poll, landing late, took the lock it runs under: "+
			"store value %q (the waiter's %q), PTTL %v; the waiter's lock lost: %v; "+
			"after the waiter's release another caller gets: %v",
			value, lk.Token(), direct.PTTL(ctx, skey).Val(), lost, oerr)
	}
}
