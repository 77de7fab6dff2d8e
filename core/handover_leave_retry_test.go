package core_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/faultproxy"
	"github.com/reqlock/reqlock/internal/redistest"
)

// leaveErrors reports, on a channel, the outcome of each Leave over a
// client that resends.
type leaveErrors struct{ ch chan error }

func (h leaveErrors) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h leaveErrors) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if isLeave(cmd) {
			select {
			case h.ch <- err:
			default:
			}
		}
		return err
	}
}

// isLeave reports whether cmd is release.lua with a marker for a waiter's
// name and a waiter to take out of the line: its keys are the lock, the
// line, the fence counter and the marker (a waiter's acquire names the
// fence counter second), its last argument the waiter (a cancel's is ”).
func isLeave(cmd redis.Cmder) bool {
	args := cmd.Args()
	if len(args) < 8 {
		return false
	}
	line, _ := args[4].(string)
	marker, _ := args[6].(string)
	leaving, _ := args[len(args)-1].(string)
	return strings.HasSuffix(line, ":q") && strings.Contains(marker, ":cancel:~") && leaving != ""
}

func (h leaveErrors) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// A waiter's poll times out and go-redis resends it; the resent copy is
// turned away and the waiter goes on waiting. Its caller then gives up,
// while the link drops everything: the Leave, with its marker for the
// waiter's name, fails. Nothing else marks the name: every attempt of the
// wait was answered, so none was cancelled. The Leave must be tried again
// once the link is back, before the first copy of the poll lands on a key
// its holder released meanwhile, or that copy takes it under the waiter's
// name for a whole lease, for nobody.
func TestHandOverResentPollAfterFailedLeaveTakesNothing(t *testing.T) {
	srv := redistest.Start(t)
	p := faultproxy.Start(t, srv.Addr)
	via, polls := resendingClient(t, p, 300*time.Millisecond)
	leaves := leaveErrors{ch: make(chan error, 4)}
	via.AddHook(leaves)
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
	wctx, giveUp := context.WithCancel(ctx)
	defer giveUp()
	wGot := obtainAsync(wctx, waiter, "k")
	waitFor(t, "the waiter to stand in line", func() bool { return direct.LLen(ctx, skey+":q").Val() == 1 })

	h := p.HoldNext(faultproxy.Upstream)
	t.Cleanup(h.Release)
	heldAcquire(t, h)
	polls.drain()
	// The resent copy is turned away: the waiter goes back to waiting.
	if !polls.nextPoll(5 * time.Second) {
		t.Fatal("the resent poll was not answered")
	}

	p.Drop(faultproxy.Upstream)
	giveUp()
	got := <-wGot
	if got.err == nil {
		_ = got.lk.Release(ctx)
		t.Fatal("the waiter got the lock")
	}
	if !errors.Is(got.err, core.ErrNotObtained) {
		t.Fatalf("the waiter's Obtain: %v, want ErrNotObtained", got.err)
	}
	select {
	case err := <-leaves.ch:
		if err == nil {
			t.Fatal("the Leave went through the dropped link")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter did not leave the line")
	}

	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// The link is back: the first copy of the poll lands. A Leave tried
	// again would land too.
	p.Heal()
	time.Sleep(4 * core.HandOffTimeout)
	settle(t, direct)

	lk, err := other.TryObtain(ctx, "k")
	if err != nil {
		t.Fatalf("the waiter gave up, yet the first copy of its resent poll took the key for nobody: "+
			"value %q, PTTL %v; another caller gets %v",
			direct.Get(ctx, skey).Val(), direct.PTTL(ctx, skey).Val(), err)
	}
	_ = lk.Release(ctx)
}
