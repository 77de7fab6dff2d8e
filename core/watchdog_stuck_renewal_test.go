package core_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// One renewal whose bytes are stuck on one TCP connection (a half-dead
// pooled connection, a lost segment) while Redis itself is healthy and
// reachable over every other connection: the watchdog gives that one round
// trip the whole remaining validity as its deadline and never tries again,
// so the lock is declared lost although the key is still ours in Redis and
// any retry on a fresh connection would have renewed it.
func TestOneStuckRenewalIsRetried(t *testing.T) {
	px := redistest.StartProxied(t)
	const ttl = 900 * time.Millisecond
	l := newLocker(redisstore.New(px.Via), core.WithTTL(ttl))
	ctx := ctxT(t, 10*time.Second)
	lk, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release(ctx)

	h := px.Proxy.HoldNext(faultproxy.Upstream) // only the next command: the renewal at ~ttl/3
	t.Cleanup(h.Release)
	redistest.WaitCaptured(t, h, "renewal")
	skey, _ := l.StoreKey("k")
	// Redis is fine: the observer and new connections through the proxy work.
	if err := px.Via.Ping(ctx).Err(); err != nil {
		t.Fatalf("a fresh connection through the proxy fails: %v", err)
	}
	select {
	case <-lk.Lost():
		left := px.Direct.PTTL(ctx, skey).Val()
		t.Fatalf("the lock was declared lost while Redis was healthy and still held it for us "+
			"(value ours: %v, PTTL %v): one stuck renewal was never retried",
			px.Direct.Get(ctx, skey).Val() == lk.Token(), left)
	case <-time.After(2 * ttl):
	}
}

// A lock a waiter runs under after a hand-off is valid for what is left of
// HandOffTimeout since its last poll: under 250ms. Its first renewal gets a
// third of what is left then (about 50ms); when that one round trip is
// stuck on its connection, the retry must come within what is left, not
// retryGap(ttl) = ttl/10 later (300ms for a 3s lease), or the lock is
// declared lost while Redis is healthy and the stuck extend lands and
// renews it. TestOneStuckRenewalIsRetried asks the same of an ordinary
// lock.
func TestHandOverStuckFirstRenewalIsRetried(t *testing.T) {
	px := redistest.StartProxied(t)
	ctx := ctxT(t, 20*time.Second)
	const ttl = 3 * time.Second
	s := newPollScene(px, ttl)
	var renewals atomic.Int64
	px.Via.AddHook(sentExtends(&renewals))

	first, err := s.holder.Obtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	// Load the extend script, so that the stuck renewal renews when it lands.
	if err := first.Refresh(ctx, ttl); err != nil {
		t.Fatal(err)
	}
	lk := s.handOverAfterPoll(t, ctx, first)

	// The next command the waiter's client sends is the lock's first
	// renewal: it is stuck on its connection until the client gives up on it.
	h := px.Proxy.HoldNext(faultproxy.Upstream)
	t.Cleanup(h.Release)
	redistest.WaitCaptured(t, h, "renewal")
	if b := h.Bytes(); !bytes.Contains(b, []byte("evalsha")) {
		t.Fatalf("held %q, want the renewal", b)
	}
	if err := px.Via.Ping(ctx).Err(); err != nil {
		t.Fatalf("a fresh connection through the proxy fails: %v", err)
	}
	go func() {
		select {
		case <-h.Conn().ClientClosed():
			h.Release()
		case <-time.After(5 * time.Second):
		}
	}()

	select {
	case <-lk.Lost():
		time.Sleep(50 * time.Millisecond) // the stuck renewal has landed by now
		t.Fatalf("the handed-over lock was declared lost after one stuck renewal while Redis was healthy: "+
			"%d renewal round trip(s) sent in all; value ours: %v, PTTL %v",
			renewals.Load(), px.Direct.Get(ctx, s.skey).Val() == lk.Token(), px.Direct.PTTL(ctx, s.skey).Val())
	case <-time.After(ttl):
	}
}

// sentExtends counts, in n, the renewals (extend.lua calls) a client sends.
func sentExtends(n *atomic.Int64) redistest.CommandHook {
	return redistest.CommandHook{Sent: func(cmd redis.Cmder) {
		// extend.lua: two keys, the lock and its fence counter.
		if args := cmd.Args(); len(args) == 8 && fmt.Sprint(args[2]) == "2" {
			if k, _ := args[4].(string); strings.HasSuffix(k, ":fence") {
				n.Add(1)
			}
		}
	}}
}
