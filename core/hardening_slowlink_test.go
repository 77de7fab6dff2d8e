package core_test

import (
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/faultproxy"
)

// Since b89475d each renewal round trip gets only a third of the validity
// left. On a healthy link whose round trip is a fair fraction of the lease
// (here 40ms against a 150ms lease: ~97ms of validity left at the first
// renewal, 2.4 round trips), every try now times out at a third of that,
// each retry gets a third of even less, and the lock is declared lost
// although any single try given the validity left would have succeeded.
// Worse, each timed-out extend still lands and lengthens the lease in
// Redis, for a holder that has given up: the key stays taken for nobody.
func TestSlowButHealthyLinkKeepsLock(t *testing.T) {
	px := startProxied(t)
	const (
		ttl    = 150 * time.Millisecond
		oneWay = 20 * time.Millisecond
	)
	l := newLocker(core.NewRedisStore(px.via), core.WithTTL(ttl))
	ctx := ctxT(t, 10*time.Second)
	// Load the scripts first: no NOSCRIPT round trip on the slow link.
	warm, err := l.TryObtain(ctx, "warm-up")
	if err != nil {
		t.Fatal(err)
	}
	if err := warm.Refresh(ctx, ttl); err != nil {
		t.Fatal(err)
	}
	_ = warm.Release(ctx)

	px.proxy.Delay(faultproxy.Upstream, oneWay)
	px.proxy.Delay(faultproxy.Downstream, oneWay)
	begin := time.Now()
	if err := px.via.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	rtt := time.Since(begin)

	lk, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release(ctx)
	skey, _ := l.StoreKey("k")
	select {
	case <-lk.Lost():
		left := px.direct.PTTL(ctx, skey).Val()
		t.Fatalf("lock with a %v lease lost on a healthy link with a %v round trip; "+
			"Redis still has it for our token: %v, for another %v",
			ttl, rtt.Round(time.Millisecond), px.direct.Get(ctx, skey).Val() == lk.Token(), left)
	case <-time.After(10 * ttl):
	}
}
