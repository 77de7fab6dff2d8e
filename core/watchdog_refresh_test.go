package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/faultproxy"
)

// Refresh takes its turn behind a watchdog renewal (lk.extending) with a
// plain Mutex.Lock, ignoring its own context. A renewal whose command hangs
// (a stalled link, a paused Redis) holds that mutex for the rest of the
// lock's validity — about two thirds of the lease — so Refresh(ctx) with a
// 100ms deadline returns seconds later: with the default 10s lease, ~6.6s.
// Every other call here honours ctx (that is the point of
// ContextTimeoutEnabled and of the NewRedisStore warning).
func TestRefreshHonoursItsContextWhileARenewalHangs(t *testing.T) {
	px := startProxied(t)
	const ttl = 3 * time.Second
	l := newLocker(core.NewRedisStore(px.via), core.WithTTL(ttl))
	ctx := ctxT(t, 20*time.Second)
	lk, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release(ctx)

	// The watchdog's first renewal (at ~ttl/3) is the next command; hold it.
	h := px.proxy.HoldNext(faultproxy.Upstream)
	t.Cleanup(h.Release)
	waitCaptured(t, h, "renewal")

	rctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = lk.Refresh(rctx, ttl)
	took := time.Since(start)
	t.Logf("Refresh(ctx with 100ms deadline) returned %v after %v", err, took.Round(time.Millisecond))
	if took > time.Second {
		t.Fatalf("Refresh ignored its 100ms deadline: it returned after %v (err: %v), "+
			"blocked on the lock's extending mutex behind a hung watchdog renewal", took.Round(time.Millisecond), err)
	}
}
