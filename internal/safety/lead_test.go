package safety

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/leadtest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore"
	"github.com/reqlock/reqlock/redisstore/redlock"
)

// Leadership (core.Locker.Lead): on each store three instances lead one
// key, and the leader is killed, paused past its lease, or has its
// commands held on its link past its lease and then delivered, twice a
// row (internal/leadtest). A row's holds are terms, an overlap is an act
// of a term after a later term's first act, and the writes are the
// leaders' writes of their term to a register that refuses a lower term
// than it took. PostgreSQL and etcd run the same rows in their modules.

const leadTTL = time.Second

// leadStore is a store the rows run on: child builds a child process's
// store from the addresses of target's servers (nil: the instances are in
// this process).
type leadStore struct {
	name   string
	child  func(addrs []string) (core.Store, func())
	target func(t *testing.T) leadtest.Target
}

var leadStores = []leadStore{
	{"memory", nil, leadMemory},
	{"redis", leadChildRedis, leadRedis},
	{"cluster", leadChildCluster, leadCluster},
	{"sentinel", leadChildSentinel, leadSentinel},
	{"redlock", leadChildRedlock, leadRedlock},
}

var leadFaults = []struct {
	name  string
	fault leadtest.Fault
}{{"kill", leadtest.Kill}, {"pause", leadtest.Pause}, {"link-held", leadtest.Hold}}

// leadRows runs every fault on every store, a row each; the servers of a
// store serve its three rows, each on a key of its own.
func leadRows(t *testing.T) {
	for _, st := range leadStores {
		t.Run(st.name, func(t *testing.T) {
			if st.child != nil && leadtest.Child(st.child) {
				return
			}
			tg := st.target(t)
			for _, f := range leadFaults {
				t.Run(f.name, func(t *testing.T) { leadRow(t, leadtest.Scenario(t, tg, leadTTL, f.fault)) })
			}
		})
	}
}

// leadRow puts a leadership row in the table.
func leadRow(t *testing.T, lr leadtest.Row) {
	rw := row{scenario: lr.Scenario, store: lr.Store, ops: lr.Terms, overlaps: lr.Overlaps,
		stale: lr.Stale, refused: lr.Refused, verdict: lr.Verdict()}
	t.Logf("%s on %s: %s", lr.Scenario, lr.Store, lr.Verdict())
	table.mu.Lock()
	table.rows = append(table.rows, rw)
	table.mu.Unlock()
}

// The instances are goroutines on one memory store, each behind a gate.
func leadMemory(*testing.T) leadtest.Target {
	s := memorystore.New()
	return leadtest.Target{Store: "memory", Local: func(string) store.Store { return s }}
}

func leadRedis(t *testing.T) leadtest.Target {
	srv := redistest.Start(t)
	return leadtest.Target{Store: "redis", Addrs: []string{srv.Addr},
		Linked: func(string) (store.Store, []*faultproxy.Proxy) {
			dial, links := viaLinks(t, srv.Addr)
			o := redistest.ClientOptions(srv.Addr)
			o.Dialer = dial
			return redisstore.New(closing(t, redis.NewClient(o))), links
		}}
}

func leadCluster(t *testing.T) leadtest.Target {
	c := redistest.StartCluster(t, 3)
	return leadtest.Target{Store: "cluster (3 masters)", Addrs: c.Addrs,
		Linked: func(string) (store.Store, []*faultproxy.Proxy) {
			dial, links := viaLinks(t, c.Addrs...)
			o := redistest.ClusterOptions(c.Addrs)
			o.Dialer = dial
			return redisstore.New(closing(t, redis.NewClusterClient(o))), links
		}}
}

func leadSentinel(t *testing.T) leadtest.Target {
	s := redistest.StartSentinel(t)
	var data []string
	for _, d := range s.Data {
		data = append(data, d.Addr)
	}
	return leadtest.Target{Store: "sentinel (1 replica)", Addrs: s.SentinelAddrs(),
		Linked: func(string) (store.Store, []*faultproxy.Proxy) {
			// The sentinels are reached directly; the data servers
			// through the instance's links.
			dial, links := viaLinks(t, data...)
			o := s.FailoverOptions()
			o.Dialer = dial
			return redisstore.New(closing(t, redis.NewFailoverClient(o))), links
		}}
}

func leadRedlock(t *testing.T) leadtest.Target {
	var addrs []string
	for _, s := range redistest.StartN(t, 3) {
		addrs = append(addrs, s.Addr)
	}
	return leadtest.Target{Store: "redlock (3)", Addrs: addrs,
		Linked: func(string) (store.Store, []*faultproxy.Proxy) {
			dial, links := viaLinks(t, addrs...)
			var clients []redis.UniversalClient
			for _, a := range addrs {
				o := redistest.ClientOptions(a)
				o.Dialer = dial
				clients = append(clients, closing(t, redis.NewClient(o)))
			}
			return redlock.New(clients...), links
		}}
}

// viaLinks starts a fault proxy to each of addrs, and returns a dialer
// that reaches those addresses through them (and any other directly).
func viaLinks(t *testing.T, addrs ...string) (func(context.Context, string, string) (net.Conn, error), []*faultproxy.Proxy) {
	via := make(map[string]string, len(addrs))
	var links []*faultproxy.Proxy
	for _, a := range addrs {
		p := faultproxy.Start(t, a)
		via[a] = p.Addr()
		links = append(links, p)
	}
	var d net.Dialer
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if v, ok := via[addr]; ok {
			addr = v
		}
		return d.DialContext(ctx, network, addr)
	}, links
}

func closing[C interface{ Close() error }](t *testing.T, c C) C {
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// The stores of child processes, built from the addresses of the
// parent's servers.

func leadChildRedis(addrs []string) (core.Store, func()) {
	c := redis.NewClient(redistest.ClientOptions(addrs[0]))
	return redisstore.New(c), func() { _ = c.Close() }
}

func leadChildCluster(addrs []string) (core.Store, func()) {
	c := redis.NewClusterClient(redistest.ClusterOptions(addrs))
	return redisstore.New(c), func() { _ = c.Close() }
}

func leadChildSentinel(addrs []string) (core.Store, func()) {
	c := redis.NewFailoverClient(redistest.FailoverOptions(addrs))
	return redisstore.New(c), func() { _ = c.Close() }
}

func leadChildRedlock(addrs []string) (core.Store, func()) {
	var clients []redis.UniversalClient
	for _, a := range addrs {
		clients = append(clients, redis.NewClient(redistest.ClientOptions(a)))
	}
	return redlock.New(clients...), func() {
		for _, c := range clients {
			_ = c.Close()
		}
	}
}
