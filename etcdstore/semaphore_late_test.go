package etcdstore_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/etcdstore"
	"github.com/reqlock/reqlock/internal/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// A permit waiter's join of the line whose bytes are held on the way
// while its caller gives up lands late. Left alone it would stand in line
// (the first waiter shows the held bytes do land); once the Locker has
// done what it does for a wait it gave up on, cancelled the attempt and
// left the line, it stands nowhere, and takes nothing.
func TestLatePermitLineJoinTakesNothing(t *testing.T) {
	c := etcdtest.Start(t)
	cli := c.Client(t)
	direct := etcdstore.New(cli)
	ctx := ctxFor(t, time.Minute)
	const key = "late/{permit}"
	ttl := 10 * time.Second
	if _, err := direct.AcquirePermit(ctx, store.Lease{Key: key, Token: "holder", TTL: ttl}, 1); err != nil {
		t.Fatal(err)
	}
	line := func() int64 {
		r, err := cli.Get(ctx, key+"/permit-line/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			t.Fatal(err)
		}
		return r.Count
	}

	// join holds the next join of waiter through a client of its own, its
	// caller giving up meanwhile, and returns a func that lets it land.
	// Another waiter of that client stands in line first, on the line
	// lease the join uses, which is kept alive meanwhile (as the store
	// keeps it alive for its other waiters): the join, landing late, finds
	// it alive.
	join := func(waiter string) (store.Lease, func()) {
		p := faultproxy.Start(t, c.Members[0].DirectEndpoint())
		via := etcdstore.New(etcdtest.NewClient(t, p.Addr()))
		instance, _, _ := strings.Cut(waiter, "/")
		done, err := via.SubscribePermits("late/", instance, func(string, string) {}).Hold(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(done)
		keeper := instance + "/keeper"
		if _, err := via.AcquirePermitQueued(ctx, store.Lease{Key: key, Token: keeper, TTL: ttl}, 1, keeper); err == nil {
			t.Fatal("a permit of a full key was granted")
		}
		r, err := cli.Get(ctx, key+"/permit-line/"+keeper)
		if err != nil || len(r.Kvs) == 0 {
			t.Fatalf("the keeper stands in no line (%v)", err)
		}
		kctx, stop := context.WithCancel(ctx)
		t.Cleanup(stop)
		alive, err := cli.KeepAlive(kctx, clientv3.LeaseID(r.Kvs[0].Lease))
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for range alive {
			}
		}()
		l := store.Lease{Key: key, Token: waiter + "-attempt", TTL: ttl}
		held := holdChunk(t, p, []byte("/permit-line/"+waiter))
		short, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if _, err := via.AcquirePermitQueued(short, l, 1, waiter); err == nil {
			t.Fatal("a permit of a full key was granted")
		}
		held.wait()
		return l, func() {
			held.Release()
			// It lands lateBy after it was sent; the reset of its stream
			// that the client sent as it gave up, later still.
			time.Sleep(time.Until(held.at.Add(lateBy + 500*time.Millisecond)))
		}
	}

	_, land := join("i1/landing")
	land()
	eventually(t, 10*time.Second, "the held join, left alone, to land", func() bool { return line() == 2 })
	for _, w := range []string{"i1/landing", "i1/keeper"} {
		if err := direct.LeavePermitLine(ctx, key, w); err != nil {
			t.Fatal(err)
		}
	}

	l, land := join("i2/gone")
	if err := direct.CancelPermit(ctx, l); err != nil && err != store.ErrNotHeld {
		t.Fatal(err)
	}
	if err := direct.LeavePermitLine(ctx, key, "i2/gone"); err != nil {
		t.Fatal(err)
	}
	land()
	if n := line(); n != 1 {
		t.Fatalf("the late join stands in line: %d waiters, want the keeper alone", n)
	}
	if hs, err := direct.InspectPermits(ctx, key); err != nil || len(hs) != 1 {
		t.Fatalf("%d permits (%v), want the holder's alone", len(hs), err)
	}
}

// lateBy is how late a held join lands: every chunk of its connection is
// forwarded that long after it was sent, so that the reset of its stream,
// which the client sends as it gives up, lands after it, and etcd runs it
// as a request whose caller is gone.
const lateBy = 3 * time.Second

// heldChunk is the chunk holdChunk holds.
type heldChunk struct {
	*faultproxy.Held
	at   time.Time // when it was sent
	done chan struct{}
}

func (h *heldChunk) wait() {
	select {
	case <-h.done:
	case <-time.After(10 * time.Second):
	}
	if h.Held == nil {
		panic("no chunk held")
	}
}

// holdChunk holds the first chunk sent upstream through p that carries
// mark, letting every chunk before it through, and delays every chunk of
// its connection from then on by lateBy.
func holdChunk(t *testing.T, p *faultproxy.Proxy, mark []byte) *heldChunk {
	t.Helper()
	out := &heldChunk{done: make(chan struct{})}
	h := p.HoldNext(faultproxy.Upstream)
	go func() {
		defer close(out.done)
		for {
			select {
			case <-h.Captured():
			case <-time.After(10 * time.Second):
				h.Release()
				return
			}
			if bytes.Contains(h.Bytes(), mark) {
				h.Conn().Delay(faultproxy.Upstream, lateBy)
				out.Held, out.at = h, time.Now()
				return
			}
			next := p.HoldNext(faultproxy.Upstream)
			h.Release()
			h = next
		}
	}()
	t.Cleanup(func() {
		<-out.done
		if out.Held != nil {
			out.Held.Release()
		}
	})
	return out
}
