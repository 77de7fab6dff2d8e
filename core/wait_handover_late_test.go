package core_test

import (
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/lockertest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// A hand-off whose message comes late, after its HandOffTimeout ran out,
// someone else took the lock and the waiter was turned away again, is not
// relied on: its fence is no larger than the last one the waiter saw. The
// waiter asks the store, is turned away, and keeps waiting; it gets the
// lock once the other holder releases.
func TestHandOverToldLateIsNotTrusted(t *testing.T) {
	px := redistest.StartProxied(t)
	ctx := ctxT(t, 20*time.Second)
	direct := redisstore.New(px.Direct)
	holder := newLocker(direct, core.WithTTL(10*time.Second))
	other := newLocker(direct, core.WithTTL(10*time.Second))
	waiter := newLocker(redisstore.New(px.Via), core.WithTTL(10*time.Second))
	skey, _ := holder.StoreKey("k")

	first, err := holder.Obtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	known := len(px.Proxy.Conns())
	wGot := lockertest.ObtainAsync(ctx, waiter, "k")
	lockertest.WaitFor(t, "the waiter to stand in line", func() bool { return px.Direct.LLen(ctx, skey+":q").Val() == 1 })
	conns := px.Proxy.Conns()
	if len(conns) != known+1 {
		t.Fatalf("%d connections, want %d: the waiter's and its subscription's", len(conns), known+1)
	}
	commands, subscription := conns[known-1], conns[known]

	// The waiter's next poll and the hand-off's message are both held.
	subscription.Hold(faultproxy.Downstream)
	commands.Hold(faultproxy.Upstream)
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(store.HandOffTimeout + 20*time.Millisecond) // the hand-off runs out
	taken, err := other.TryObtain(ctx, "k")
	if err != nil {
		t.Fatalf("the hand-off did not run out: %v", err)
	}
	// The waiter's poll lands now, and is turned away: the other holds it.
	polled := px.Answered.Load()
	commands.Release(faultproxy.Upstream)
	lockertest.WaitFor(t, "the waiter's poll to be answered", func() bool { return px.Answered.Load() > polled })
	// Then the old hand-off's message comes.
	subscription.Release(faultproxy.Downstream)
	select {
	case o := <-wGot:
		t.Fatalf("the waiter took a hand-off that had run out (err %v) while another holds the lock", o.Err)
	case <-time.After(3 * store.HandOffTimeout):
	}
	if h, err := holder.Inspect(ctx, "k"); err != nil || h.HandedOff || !h.Held {
		t.Fatalf("inspect: %+v, %v: the other should still hold it", h, err)
	}

	if err := taken.Release(ctx); err != nil {
		t.Fatal(err)
	}
	o := <-wGot
	if o.Err != nil {
		t.Fatal(o.Err)
	}
	if o.Lock.Fence() <= taken.Fence() {
		t.Fatalf("fence %d after %d", o.Lock.Fence(), taken.Fence())
	}
	_ = o.Lock.Release(ctx)
}
