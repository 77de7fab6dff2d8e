package redisstore_test

import (
	"testing"
	"time"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/lockertest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// WithPrefix accepts any prefix without '{' or '}', spaces included. A
// release tells the head of the line "key waiter fence", space-separated:
// the Locker must read the key whole, or it matches no waiter, the waiter
// is never told, and it waits for its next poll, here seconds away, as if
// nobody had released.
func TestHandOverWakesUnderAPrefixWithSpaces(t *testing.T) {
	for _, prefix := range []string{"reqlock:", "my app:"} {
		t.Run(prefix, func(t *testing.T) {
			srv := redistest.Start(t)
			ctx := ctxT(t, 20*time.Second)
			const ttl = 10 * time.Second
			holder := newLocker(redisstore.New(srv.Client(t)), core.WithTTL(ttl), core.WithPrefix(prefix))
			// Polls far apart: the waiter gets the lock in time only if the
			// release tells it.
			waiter := newLocker(redisstore.New(srv.Client(t)), core.WithTTL(ttl), core.WithPrefix(prefix),
				core.WithRetry(backoff.Constant(8*time.Second)))
			skey, _ := holder.StoreKey("k")
			observer := srv.Client(t)

			first, err := holder.Obtain(ctx, "k")
			if err != nil {
				t.Fatal(err)
			}
			wctx := ctxT(t, 4*time.Second)
			wGot := lockertest.ObtainAsync(wctx, waiter, "k")
			lockertest.WaitFor(t, "the waiter to stand in line", func() bool { return observer.LLen(ctx, skey+":q").Val() == 1 })
			if err := first.Release(ctx); err != nil {
				t.Fatal(err)
			}
			got := <-wGot
			if got.Err != nil {
				t.Fatalf("prefix %q: the waiter did not get the lock released 4s before its context ended: %v", prefix, got.Err)
			}
			_ = got.Lock.Release(ctx)
		})
	}
}
