package redisstore_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/lockertest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// leaveErrors reports, on ch, the outcome of each Leave over a client that
// resends.
func leaveErrors(ch chan error) redistest.CommandHook {
	return redistest.CommandHook{Answered: func(cmd redis.Cmder, err error) {
		if isLeave(cmd) {
			select {
			case ch <- err:
			default:
			}
		}
	}}
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

// A waiter's poll times out and go-redis resends it; the resent copy is
// turned away and the waiter goes on waiting. Its caller then gives up,
// while the link drops everything: the Leave, with its marker for the
// waiter's name, fails. Nothing else marks the name: every attempt of the
// wait was answered, so none was cancelled. The Leave must be tried again
// once the link is back, before the first copy of the poll lands on a key
// its holder released meanwhile, or that copy takes it under the waiter's
// name for a whole lease, for nobody.
func TestHandOverResentPollAfterFailedLeaveTakesNothing(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	wctx, giveUp := context.WithCancel(ctx)
	defer giveUp()
	leaves := make(chan error, 4)
	s := standInLine(t, ctx, wctx, 300*time.Millisecond, leaveErrors(leaves))

	h := s.proxy.HoldNext(faultproxy.Upstream)
	t.Cleanup(h.Release)
	heldAcquire(t, h)
	s.polls.Drain()
	// The resent copy is turned away: the waiter goes back to waiting.
	if !s.polls.Next(5 * time.Second) {
		t.Fatal("the resent poll was not answered")
	}

	s.proxy.Drop(faultproxy.Upstream)
	giveUp()
	got := <-s.got
	if got.Err == nil {
		_ = got.Lock.Release(ctx)
		t.Fatal("the waiter got the lock")
	}
	if !errors.Is(got.Err, core.ErrNotObtained) {
		t.Fatalf("the waiter's Obtain: %v, want ErrNotObtained", got.Err)
	}
	select {
	case err := <-leaves:
		if err == nil {
			t.Fatal("the Leave went through the dropped link")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter did not leave the line")
	}

	if err := s.first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// The link is back: the first copy of the poll lands. A Leave tried
	// again would land too.
	s.proxy.Heal()
	time.Sleep(4 * store.HandOffTimeout)
	s.freeForOthers(t, ctx, "the waiter gave up, yet the first copy of its resent poll")
}

// warmPool leaves n connections of c open, idle and past their handshake,
// so that the next commands each send one chunk, the command itself.
func warmPool(t *testing.T, c *redis.Client, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			// Blocks its connection for a moment: the n calls need n of them.
			errs <- c.Do(context.Background(), "BLPOP", "warm:nothing", "0.1").Err()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatal(err)
		}
	}
}

// A waiter without the watchdog claims its hand-off with an acquire, and
// the link stalls: the claim's reply times out (the attempt timeout), the
// waiter gives up with ErrUnavailable, cancels the claim's token (retried
// in the background for a lease) and leaves the line (one try). The claim
// lands after all, before the cancel, and finds '~' + waiter: the lock is
// its for a whole lease. The Leave failed once on the stalled link and is
// not tried again; the cancel, retried, must free the key, so it must name
// what the claim holds.
func TestHandOverLateClaimAfterFailedLeaveIsCancelled(t *testing.T) {
	srv := redistest.Start(t)
	p := faultproxy.Start(t, srv.Addr)
	via := redis.NewClient(redistest.ClientOptions(p.Addr()))
	t.Cleanup(func() { _ = via.Close() })
	polls := redistest.NewAnsweredPolls()
	via.AddHook(polls.Hook())
	warmPool(t, via, 4)
	direct := srv.Client(t)
	ctx := ctxT(t, 30*time.Second)

	const ttl = 10 * time.Second
	holder := newLocker(redisstore.New(direct), core.WithTTL(ttl))
	waiter := newLocker(redisstore.New(via), core.WithTTL(ttl), core.WithoutWatchdog(),
		core.WithAttemptTimeout(60*time.Millisecond))
	other := newLocker(redisstore.New(direct), core.WithTTL(ttl))
	skey, _ := holder.StoreKey("k")

	first, err := holder.Obtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	polls.Drain()
	wGot := lockertest.ObtainAsync(ctx, waiter, "k")
	lockertest.WaitFor(t, "the waiter to stand in line", func() bool { return direct.LLen(ctx, skey+":q").Val() == 1 })
	// Right after an answered poll: the waiter's next command is its claim.
	if !polls.Next(5 * time.Second) {
		t.Fatal("the waiter did not poll")
	}
	// The claim, then the cancel of its token and the Leave, in either order.
	held := []*faultproxy.Held{p.HoldNext(faultproxy.Upstream), p.HoldNext(faultproxy.Upstream), p.HoldNext(faultproxy.Upstream)}
	for _, h := range held {
		t.Cleanup(h.Release)
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	for _, h := range held {
		redistest.WaitCaptured(t, h, "claim, cancel or Leave of the waiter")
	}
	claim := held[0]
	if b := claim.Bytes(); !bytes.Contains(b, []byte(":q")) {
		t.Fatalf("held %q first, want the waiter's claim", b)
	}
	cancelled, leave := held[1], held[2]
	if !bytes.Contains(cancelled.Bytes(), []byte(":cancel:")) {
		cancelled, leave = leave, cancelled
	}
	if !bytes.Contains(cancelled.Bytes(), []byte(":cancel:")) || bytes.Contains(leave.Bytes(), []byte(":cancel:")) {
		t.Fatalf("held %q and %q, want the claim's cancel and the Leave", held[1].Bytes(), held[2].Bytes())
	}

	// The claim lands within the hand-off; the Leave is lost with its
	// connection; the cancel goes through.
	claim.Release()
	lockertest.WaitFor(t, "the claim to land", func() bool { return direct.PTTL(ctx, skey).Val() > store.HandOffTimeout })
	leave.Conn().Cut()
	cancelled.Release()

	got := <-wGot
	if got.Err == nil {
		_ = got.Lock.Release(ctx)
		t.Fatal("the waiter got the lock: the claim's reply was not lost")
	}
	if !errors.Is(got.Err, core.ErrUnavailable) {
		t.Fatalf("the waiter's Obtain: %v, want ErrUnavailable", got.Err)
	}
	// Give the background cancel time to be tried again, had it failed.
	time.Sleep(2 * store.HandOffTimeout)
	redistest.Settle(t, direct)

	lk, err := other.TryObtain(ctx, "k")
	if err != nil {
		t.Fatalf("the waiter gave up, yet its late claim keeps the key for nobody: value %q, PTTL %v; "+
			"another caller gets %v", direct.Get(ctx, skey).Val(), direct.PTTL(ctx, skey).Val(), err)
	}
	_ = lk.Release(ctx)
}
