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
)

// leaveErrors reports, on ch, the outcome of each Leave over a client that
// resends.
func leaveErrors(ch chan error) commandHook {
	return commandHook{answered: func(cmd redis.Cmder, err error) {
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
	s.polls.drain()
	// The resent copy is turned away: the waiter goes back to waiting.
	if !s.polls.nextPoll(5 * time.Second) {
		t.Fatal("the resent poll was not answered")
	}

	s.proxy.Drop(faultproxy.Upstream)
	giveUp()
	got := <-s.got
	if got.err == nil {
		_ = got.lk.Release(ctx)
		t.Fatal("the waiter got the lock")
	}
	if !errors.Is(got.err, core.ErrNotObtained) {
		t.Fatalf("the waiter's Obtain: %v, want ErrNotObtained", got.err)
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
	time.Sleep(4 * core.HandOffTimeout)
	s.freeForOthers(t, ctx, "the waiter gave up, yet the first copy of its resent poll")
}
