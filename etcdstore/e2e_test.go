package etcdstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/etcdstore"
	"github.com/reqlock/reqlock/internal/etcdtest"
	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/internal/httpcases/frameworks"
	"go.etcd.io/etcd/client/v3/namespace"
)

// Every shared end-to-end case, on each of the four frameworks, against
// etcd: one member per framework, each case on a client of its own, in a
// namespace of its own (as an empty store), that reaches it through a
// fault proxy, which plays the store down or hung.
func TestEndToEnd(t *testing.T) {
	st := httpcases.Store{Name: "etcd", Shared: sharedBackend}
	for _, fw := range frameworks.All {
		t.Run(fw.Name, func(t *testing.T) { httpcases.RunOn(t, fw, st) })
	}
}

// cases numbers the namespaces.
var cases atomic.Int64

func sharedBackend(parent testing.TB) func(tb testing.TB) httpcases.Backend {
	c := etcdtest.Start(parent)
	direct := c.Client(parent)
	return func(tb testing.TB) httpcases.Backend {
		p := faultproxy.Start(tb, c.Members[0].DirectEndpoint())
		ns := fmt.Sprintf("case%d/", cases.Add(1))
		cli := etcdtest.NewClient(tb, p.Addr())
		cli.KV = namespace.NewKV(cli.KV, ns)
		cli.Watcher = namespace.NewWatcher(cli.Watcher, ns)
		cli.Lease = namespace.NewLease(cli.Lease, ns)
		s := etcdstore.New(cli)
		return httpcases.Backend{
			Store: s,
			Vanish: func(skey string) {
				_, _ = direct.Delete(context.Background(), ns+skey)
			},
			Down: func() {
				p.Refuse(true)
				p.Cut()
				// A connection accepted as Refuse was set may have missed
				// the first Cut.
				time.Sleep(10 * time.Millisecond)
				p.Cut()
			},
			Hang: func() {
				p.Hold(faultproxy.Upstream)
				tb.Cleanup(func() { p.Release(faultproxy.Upstream) })
			},
			Resume: func() { p.Release(faultproxy.Upstream) },
		}
	}
}
