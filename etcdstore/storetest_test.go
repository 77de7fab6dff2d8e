package etcdstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/storetest"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/etcdstore"
	"github.com/reqlock/reqlock/internal/etcdtest"
)

// The whole store contract on one etcd member; Slow reaches it through a
// fault proxy.
func TestConformance(t *testing.T) {
	c := etcdtest.Start(t)
	cli := c.Client(t)
	storetest.Run(t, storetest.Harness{
		New: func(testing.TB) core.Store { return etcdstore.New(cli) },
		// etcd's leases are whole seconds.
		MinTTL: 2 * time.Second,
		// The head of the line holds the lock under its line key, whose
		// lease is LineTTL; a waiter that stops attempting while its
		// instance does not wait is taken out of line sooner.
		HandOffBound: etcdstore.LineTTL,
		Slow: func(t testing.TB) storetest.Slow {
			p := faultproxy.Start(t, c.Members[0].DirectEndpoint())
			return storetest.Slow{Store: etcdstore.New(etcdtest.NewClient(t, p.Addr())), Hold: func(t testing.TB, _ string) func() {
				return holdNext(t, p)
			}}
		},
	})
}

// holdNext holds the next bytes the client sends: the request the test
// gives up on. Everything after it on that connection waits behind it, so
// the client's keepalive goes unanswered, it drops the connection and
// opens another for what comes next (the cancel). land lets the held bytes
// reach etcd, then gives it a moment to run them.
func holdNext(t testing.TB, p *faultproxy.Proxy) func() {
	t.Helper()
	h := p.HoldNext(faultproxy.Upstream)
	t.Cleanup(h.Release)
	return func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := h.Wait(ctx); err != nil {
			t.Fatal("no request was held")
		}
		h.Release()
		time.Sleep(300 * time.Millisecond)
	}
}
