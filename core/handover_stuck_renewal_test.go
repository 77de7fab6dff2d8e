package core_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/faultproxy"
)

// A lock a waiter runs under after a hand-off is valid for what is left of
// HandOffTimeout since its last poll: under 250ms. Its first renewal gets a
// third of what is left then (about 50ms); when that one round trip is
// stuck on its connection, the retry must come within what is left, not
// retryGap(ttl) = ttl/10 later (300ms for a 3s lease), or the lock is
// declared lost while Redis is healthy and the stuck extend lands and
// renews it. TestOneStuckRenewalIsRetried asks the same of an ordinary
// lock.
func TestHandOverStuckFirstRenewalIsRetried(t *testing.T) {
	px := startProxied(t)
	ctx := ctxT(t, 20*time.Second)
	const ttl = 3 * time.Second
	holder := newLocker(core.NewRedisStore(px.direct), core.WithTTL(ttl))
	polls := newAnsweredPolls()
	px.via.AddHook(polls)
	var renewals sentExtends
	px.via.AddHook(&renewals)
	waiter := newLocker(core.NewRedisStore(px.via), core.WithTTL(ttl))
	skey, _ := holder.StoreKey("k")

	first, err := holder.Obtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	// Load the extend script, so that the stuck renewal renews when it lands.
	if err := first.Refresh(ctx, ttl); err != nil {
		t.Fatal(err)
	}
	wGot := obtainAsync(ctx, waiter, "k")
	waitFor(t, "the waiter to stand in line", func() bool { return px.direct.LLen(ctx, skey+":q").Val() == 1 })
	// Release right after one of the waiter's polls: the hand-off it runs
	// under has as much time left as it can have.
	polls.drain()
	if !polls.nextPoll(5 * time.Second) {
		t.Fatal("the waiter did not poll")
	}
	lk := handOver(t, ctx, first, wGot)
	t.Logf("obtained under token %q", lk.Token())

	// The next command the waiter's client sends is the lock's first
	// renewal: it is stuck on its connection until the client gives up on it.
	h := px.proxy.HoldNext(faultproxy.Upstream)
	t.Cleanup(h.Release)
	waitCaptured(t, h, "renewal")
	if b := h.Bytes(); !bytes.Contains(b, []byte("evalsha")) {
		t.Fatalf("held %q, want the renewal", b)
	}
	if err := px.via.Ping(ctx).Err(); err != nil {
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
			renewals.n.Load(), px.direct.Get(ctx, skey).Val() == lk.Token(), px.direct.PTTL(ctx, skey).Val())
	case <-time.After(ttl):
	}
}

// sentExtends counts the renewals (extend.lua calls) a client sends.
type sentExtends struct{ n atomic.Int64 }

func (s *sentExtends) DialHook(next redis.DialHook) redis.DialHook { return next }
func (s *sentExtends) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		// extend.lua: two keys, the lock and its fence counter.
		if args := cmd.Args(); len(args) == 8 && fmt.Sprint(args[2]) == "2" {
			if k, _ := args[4].(string); strings.HasSuffix(k, ":fence") {
				s.n.Add(1)
			}
		}
		return next(ctx, cmd)
	}
}
func (s *sentExtends) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
