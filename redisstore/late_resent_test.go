package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// go-redis resends a command whose reply timed out on its socket
// (ReadTimeout) when MaxRetries > 0 — its default is 3 — as long as the
// caller's context is still alive. The acquire that the Locker sees succeed
// is then the second copy; the first is still on its way. When it lands
// after the holder released the lock, SET NX finds the key free and takes
// it, with the holder's token, for a whole lease: nobody holds it, nobody
// renews or releases it, and every other caller is refused for the lease.
// No cancel marker was ever written: the Locker never saw a failure.
func TestRetriedAcquireLandingAfterReleaseTakesNothing(t *testing.T) {
	srv := redistest.Start(t)
	p := faultproxy.Start(t, srv.Addr)
	opts := redistest.ClientOptions(p.Addr())
	opts.MaxRetries = 3                       // go-redis's default
	opts.ReadTimeout = 300 * time.Millisecond // default is 3s; shorter only to keep the test fast
	via := redis.NewClient(opts)
	t.Cleanup(func() { _ = via.Close() })
	direct := srv.Client(t)
	ctx := ctxT(t, 20*time.Second)
	if err := via.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}

	const ttl = 10 * time.Second
	l := newLocker(redisstore.New(via), core.WithTTL(ttl))
	other := newLocker(redisstore.New(direct), core.WithTTL(ttl))
	// Load the script so that the held EVALSHA runs when it lands.
	warm, err := l.TryObtain(ctx, "warm-up")
	if err != nil {
		t.Fatal(err)
	}
	_ = warm.Release(ctx)

	h := p.HoldNext(faultproxy.Upstream)
	t.Cleanup(h.Release)
	// A caller with a generous deadline (an Obtain that may wait 5s).
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	lk, err := l.TryObtain(actx, "k")
	if err != nil {
		t.Fatalf("TryObtain: %v (go-redis did not retry?)", err)
	}
	select {
	case <-h.Captured():
	default:
		t.Fatal("no command was held")
	}
	if err := lk.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	// The first copy, sent before the reply timed out, lands now.
	select {
	case <-h.Conn().ClientClosed():
	case <-time.After(5 * time.Second):
		t.Fatal("the client kept the connection of the held command")
	}
	h.Release()
	redistest.Settle(t, direct)

	skey, _ := l.StoreKey("k")
	if n := direct.Exists(ctx, skey).Val(); n != 0 {
		left := direct.PTTL(ctx, skey).Val()
		_, oerr := other.TryObtain(ctx, "k")
		t.Fatalf("after the holder released, a duplicate of its acquire took the key for nobody: "+
			"value=%q (holder's token %q), PTTL=%v; another caller now gets: %v",
			direct.Get(ctx, skey).Val(), lk.Token(), left, oerr)
	}
	lk2, err := other.TryObtain(ctx, "k")
	if err != nil {
		if errors.Is(err, core.ErrNotObtained) {
			t.Fatalf("next caller refused: %v", err)
		}
		t.Fatal(err)
	}
	_ = lk2.Release(ctx)
}
