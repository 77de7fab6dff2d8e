package etcdstore_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/etcdstore"
	"github.com/reqlock/reqlock/internal/etcdtest"
	"github.com/reqlock/reqlock/internal/leadtest"
)

// Three instances lead one key on one etcd member, and the leader is
// killed (kill -9 of its process), stopped (SIGSTOP) for two leases, or
// has its link held for two leases and then delivered, twice a row: at
// most one acts at a time, terms only grow, a new leader acts within a
// lease and a hand-off, and the register that checks terms takes no stale
// write. The rows are printed as internal/safety prints its own.
func TestLeadSafety(t *testing.T) {
	if leadtest.Child(leadChildStore) {
		return
	}
	const ttl = 2 * time.Second // etcd leases count whole seconds
	c := etcdtest.Start(t)
	m := c.Members[0]
	tg := leadtest.Target{Store: "etcd", Addrs: c.Endpoints(),
		Linked: func(string) (store.Store, []*faultproxy.Proxy) {
			p := faultproxy.Start(t, m.DirectEndpoint())
			return etcdstore.New(etcdtest.NewClient(t, p.Addr())), []*faultproxy.Proxy{p}
		},
		// etcd revokes an expired lease on its lessor's next check, up to
		// half a second late.
		Slack: 500 * time.Millisecond}
	var rows []leadtest.Row
	for _, f := range []struct {
		name  string
		fault leadtest.Fault
	}{{"kill", leadtest.Kill}, {"pause", leadtest.Pause}, {"link-held", leadtest.Hold}} {
		t.Run(f.name, func(t *testing.T) { rows = append(rows, leadtest.Scenario(t, tg, ttl, f.fault)) })
	}
	t.Logf("leadership on etcd:\n%s", leadtest.FormatRows(rows))
}

// leadChildStore is a child instance's store: the member at addrs.
func leadChildStore(addrs []string) (core.Store, func()) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: addrs, DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		fmt.Fprintln(os.Stderr, "etcdstore lead child:", err)
		os.Exit(2)
	}
	return etcdstore.New(cli), func() { _ = cli.Close() }
}
