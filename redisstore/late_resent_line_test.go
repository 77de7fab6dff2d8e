package redisstore_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/lockertest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// resendingClient is a client through p that resends a command whose reply
// timed out (go-redis's default MaxRetries), with replies timing out after
// readTimeout; answered polls of a waiter are reported on polls.
func resendingClient(t *testing.T, p *faultproxy.Proxy, readTimeout time.Duration) (*redis.Client, *redistest.AnsweredPolls) {
	t.Helper()
	opts := redistest.ClientOptions(p.Addr())
	opts.MaxRetries = 3
	opts.ReadTimeout = readTimeout
	via := redis.NewClient(opts)
	t.Cleanup(func() { _ = via.Close() })
	polls := redistest.NewAnsweredPolls()
	via.AddHook(polls.Hook())
	if err := via.Ping(ctxT(t, 5*time.Second)).Err(); err != nil {
		t.Fatal(err)
	}
	return via, polls
}

// heldAcquire waits for h to capture a waiter's acquire and for the client
// to give up on its connection (it then resends the command elsewhere).
func heldAcquire(t *testing.T, h *faultproxy.Held) {
	t.Helper()
	redistest.WaitCaptured(t, h, "command")
	if b := h.Bytes(); !bytes.Contains(b, []byte("evalsha")) || !bytes.Contains(b, []byte(":q")) {
		t.Fatalf("held %q, want a waiter's acquire", b)
	}
	select {
	case <-h.Conn().ClientClosed():
	case <-time.After(5 * time.Second):
		t.Fatal("the client kept the connection of the held command")
	}
}

// inLine is a key a holder holds, with a waiter standing in line for it
// over a client that resends (through a fault proxy), and another Locker
// that asks for the key once whatever was held up has landed.
type inLine struct {
	proxy         *faultproxy.Proxy
	via, direct   *redis.Client
	polls         *redistest.AnsweredPolls
	holder, other *core.Locker
	first         *core.Lock
	skey          string
	got           chan lockertest.Obtained // the waiter's Obtain, on waitCtx
}

// standInLine sets the scene: replies through the proxy time out after
// readTimeout, and go-redis resends; hook, if not nil, sees the waiter's
// commands too.
func standInLine(t *testing.T, ctx, waitCtx context.Context, readTimeout time.Duration, hook redis.Hook, waiterOpts ...core.Option) inLine {
	t.Helper()
	srv := redistest.Start(t)
	s := inLine{proxy: faultproxy.Start(t, srv.Addr), direct: srv.Client(t)}
	s.via, s.polls = resendingClient(t, s.proxy, readTimeout)
	if hook != nil {
		s.via.AddHook(hook) // before the waiter sends anything
	}
	const ttl = 10 * time.Second
	s.holder = newLocker(redisstore.New(s.direct), core.WithTTL(ttl))
	s.other = newLocker(redisstore.New(s.direct), core.WithTTL(ttl))
	waiter := newLocker(redisstore.New(s.via), append([]core.Option{core.WithTTL(ttl)}, waiterOpts...)...)
	s.skey, _ = s.holder.StoreKey("k")
	var err error
	if s.first, err = s.holder.Obtain(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	s.got = lockertest.ObtainAsync(waitCtx, waiter, "k")
	lockertest.WaitFor(t, "the waiter to stand in line", func() bool { return s.direct.LLen(ctx, s.skey+":q").Val() == 1 })
	return s
}

// resendHeldPoll holds the waiter's next poll in the proxy until go-redis
// gives up on it and resends it, and waits for the resent copy to be turned
// away and for the waiter's next regular poll. The first copy lands when
// the returned hold is released.
func (s inLine) resendHeldPoll(t *testing.T) *faultproxy.Held {
	t.Helper()
	h := s.proxy.HoldNext(faultproxy.Upstream)
	t.Cleanup(h.Release)
	heldAcquire(t, h)
	s.polls.Drain()
	if !s.polls.Next(5*time.Second) || !s.polls.Next(5*time.Second) {
		t.Fatal("the waiter did not poll again")
	}
	return h
}

// waiterGot returns the lock the waiter obtained.
func (s inLine) waiterGot(t *testing.T) *core.Lock {
	t.Helper()
	o := <-s.got
	if o.Err != nil {
		t.Fatal(o.Err)
	}
	return o.Lock
}

// released checks that the waiter's release freed the key.
func (s inLine) released(t *testing.T, ctx context.Context) {
	t.Helper()
	if n := s.direct.Exists(ctx, s.skey).Val(); n != 0 {
		t.Fatalf("the key is still taken after the waiter's release: %q", s.direct.Get(ctx, s.skey).Val())
	}
}

// freeForOthers checks, once whatever was held up has landed, that another
// caller gets the key: what landed late took nothing for nobody.
func (s inLine) freeForOthers(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	redistest.Settle(t, s.direct)
	lk, err := s.other.TryObtain(ctx, "k")
	if err != nil {
		t.Fatalf("%s took the key for nobody: value %q, PTTL %v; another caller gets %v",
			what, s.direct.Get(ctx, s.skey).Val(), s.direct.PTTL(ctx, s.skey).Val(), err)
	}
	_ = lk.Release(ctx)
}
