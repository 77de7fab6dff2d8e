package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/lockertest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// A queued acquire whose waiter gave up (ctx ended, the clean-up and Leave
// ran) lands late while the key is taken: it finds its cancel marker and
// does not join the line again, so the next release hands the lock to the
// live waiter at once, not to a ghost that would hold it up for
// HandOffTimeout.
func TestLateQueuedAcquireDoesNotRejoinLine(t *testing.T) {
	px := redistest.StartProxied(t)
	ctx := ctxT(t, 20*time.Second)
	direct := redisstore.New(px.Direct)
	holder := newLocker(direct, core.WithTTL(10*time.Second))
	lw := newLocker(redisstore.New(px.Via), core.WithTTL(10*time.Second))
	skey, _ := lw.StoreKey("k")

	// Warm up: load the scripts and leave lw's subscription open
	// (listening), so that the next Obtain's first command is the queued
	// acquire itself.
	warm, err := holder.Obtain(ctx, "warm")
	if err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(30 * time.Millisecond); _ = warm.Release(ctx) }()
	wl, err := lw.Obtain(ctx, "warm")
	if err != nil {
		t.Fatal(err)
	}
	_ = wl.Release(ctx)

	h, err := holder.Obtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}

	land := px.HoldNext(t)
	before := px.Answered.Load()
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	_, err = lw.Obtain(short, "k")
	cancel()
	if err == nil {
		t.Fatal("obtained a held lock")
	}
	// The clean-up (cancel marker) and the Leave run in the background.
	lockertest.WaitFor(t, "the clean-up and Leave to run", func() bool { return px.Answered.Load() >= before+2 })
	time.Sleep(50 * time.Millisecond)
	if n := px.Direct.LLen(ctx, skey+":q").Val(); n != 0 {
		t.Fatalf("line holds %d before the late acquire lands", n)
	}
	land()
	redistest.Settle(t, px.Direct)
	line := px.Direct.LRange(ctx, skey+":q", 0, -1).Val()

	// A live waiter on a third Locker queues behind the ghost.
	other := newLocker(direct, core.WithTTL(10*time.Second))
	got := make(chan time.Time, 1)
	go func() {
		lk, err := other.Obtain(ctx, "k")
		if err != nil {
			t.Error(err)
			got <- time.Time{}
			return
		}
		got <- time.Now()
		_ = lk.Release(ctx)
	}()
	lockertest.WaitFor(t, "the live waiter to join the line", func() bool { return px.Direct.LLen(ctx, skey+":q").Val() >= int64(len(line))+1 })
	released := time.Now()
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	at := <-got
	delay := at.Sub(released)
	if len(line) > 0 || delay > 100*time.Millisecond {
		t.Fatalf("after the given-up waiter's late acquire landed the line is %q (its waiter left); the live waiter got the lock %v after the release, want at once", line, delay)
	}
}

var _ = errors.Is
