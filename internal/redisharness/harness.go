// Package redisharness gives core/storetest the Redis stores of this
// repository on real servers started for the test: one server, a Cluster,
// a Sentinel set and five Redlock masters, each with the fault proxy under
// the late-landing hook. Each store's package runs the suite with one.
package redisharness

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/storetest"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
	"github.com/reqlock/reqlock/redisstore/redlock"
)

// Single is one redis-server per test, so that Writes counts that test's
// writes alone.
func Single() storetest.Harness {
	return storetest.Harness{
		New: func(t testing.TB) core.Store {
			c := redistest.Start(t).Client(t)
			s := redisstore.New(c)
			servers.Store(s, c)
			t.Cleanup(func() { servers.Delete(s) })
			return closable(t, s, c)
		},
		Slow: func(t testing.TB) storetest.Slow {
			srv := redistest.Start(t)
			p := faultproxy.Start(t, srv.Addr)
			via := redis.NewClient(redistest.ClientOptions(p.Addr()))
			t.Cleanup(func() { _ = via.Close() })
			direct := srv.Client(t)
			return storetest.Slow{Store: redisstore.New(via), Hold: func(t testing.TB, _ string) func() {
				return holdNext(t, []*faultproxy.Proxy{p}, []redis.UniversalClient{direct})
			}}
		},
		Writes: writes,
		Close:  closeClients,
	}
}

// Cluster is one Cluster of three masters for the whole run, a client of
// its own for each test; Slow reaches each master through a proxy of its own.
func Cluster(run *testing.T) storetest.Harness {
	cl := redistest.StartCluster(run, 3)
	return storetest.Harness{
		New: func(t testing.TB) core.Store {
			cc := cl.Client(t)
			return closable(t, redisstore.New(cc), cc)
		},
		Close: closeClients,
		Slow: func(t testing.TB) storetest.Slow {
			proxies := map[string]*faultproxy.Proxy{}
			for _, s := range cl.Servers {
				proxies[s.Addr] = faultproxy.Start(t, s.Addr)
			}
			opts := redistest.ClusterOptions(cl.Addrs)
			opts.Dialer = viaProxies(proxies)
			via := redis.NewClusterClient(opts)
			t.Cleanup(func() { _ = via.Close() })
			return storetest.Slow{Store: redisstore.New(via), Hold: func(t testing.TB, key string) func() {
				_, owner := cl.KeyOwner(t, key)
				return holdNext(t, []*faultproxy.Proxy{proxies[owner.Addr]}, []redis.UniversalClient{owner.Client(t)})
			}}
		},
	}
}

// Sentinel is one Sentinel set (master, replica, three sentinels) for the
// whole run, a failover client of its own for each test; Slow reaches the data servers
// through proxies.
func Sentinel(run *testing.T) storetest.Harness {
	sn := redistest.StartSentinel(run)
	return storetest.Harness{
		New: func(t testing.TB) core.Store {
			c := sn.Client(t)
			return closable(t, redisstore.New(c), c)
		},
		Close: closeClients,
		Slow: func(t testing.TB) storetest.Slow {
			proxies := map[string]*faultproxy.Proxy{}
			for _, s := range sn.Data {
				proxies[s.Addr] = faultproxy.Start(t, s.Addr)
			}
			opts := sn.FailoverOptions()
			opts.Dialer = viaProxies(proxies)
			via := redis.NewFailoverClient(opts)
			t.Cleanup(func() { _ = via.Close() })
			return storetest.Slow{Store: redisstore.New(via), Hold: func(t testing.TB, _ string) func() {
				master, err := sn.Master(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				return holdNext(t, []*faultproxy.Proxy{proxies[master.Addr]}, []redis.UniversalClient{master.Client(t)})
			}}
		},
	}
}

// Redlock is five masters for the whole run; Slow is five more, each
// behind a proxy, all of whose copies of a command are held.
func Redlock(run *testing.T) storetest.Harness {
	return storetest.Harness{
		New:   sharedRedlock(run),
		Close: closeClients,
		Slow: func(t testing.TB) storetest.Slow {
			var proxies []*faultproxy.Proxy
			var via, direct []redis.UniversalClient
			for _, s := range redistest.StartN(t, 5) {
				p := faultproxy.Start(t, s.Addr)
				c := redis.NewClient(redistest.ClientOptions(p.Addr()))
				t.Cleanup(func() { _ = c.Close() })
				proxies, via, direct = append(proxies, p), append(via, c), append(direct, s.Client(t))
			}
			return storetest.Slow{Store: redlock.New(via...).WithNodeTimeout(time.Second), Hold: func(t testing.TB, _ string) func() {
				return holdNext(t, proxies, direct)
			}}
		},
		Waive: map[string]string{
			"fences": "Redlock's fences come from several nodes' counters and the acquirers' clocks, " +
				"and only almost always grow (see redlock.Store)",
			"lines/served-in-turn":        "a Redlock release hands the lock to nobody: each node would pick its own head",
			"lines/leave-passes-turn":     "a Redlock release hands the lock to nobody, so there is no turn to pass on",
			"lines/locker-served-in-turn": "a Redlock release tells every waiter, and the fastest wins",
			"inspect/handed-off":          "a Redlock release hands the lock to nobody",
		},
	}
}

// sharedRedlock starts five masters once, on the first New, for the run;
// each test gets clients of its own.
func sharedRedlock(run *testing.T) func(testing.TB) core.Store {
	var masters []*redistest.Server
	return func(t testing.TB) core.Store {
		if masters == nil {
			masters = redistest.StartN(run, 5)
		}
		var clients []redis.UniversalClient
		for _, srv := range masters {
			clients = append(clients, srv.Client(t))
		}
		// The contract is about answers, not latency: a generous node
		// timeout keeps a -race run on two loaded cores from timing out
		// every node at once.
		return closable(t, redlock.New(clients...).WithNodeTimeout(time.Second), clients...)
	}
}

// clients maps each store New made to the clients under it, for Close.
var clients sync.Map

// closable notes the clients under s, for closeClients, until t ends.
func closable[S core.Store](t testing.TB, s S, under ...redis.UniversalClient) S {
	clients.Store(s, under)
	t.Cleanup(func() { clients.Delete(s) })
	return s
}

// closeClients is the harnesses' Close: it closes the clients under s.
func closeClients(t testing.TB, s core.Store) {
	under, ok := clients.Load(s)
	if !ok {
		t.Fatalf("Close: no clients known for the store %T", s)
	}
	for _, c := range under.([]redis.UniversalClient) {
		_ = c.Close()
	}
}

// viaProxies dials each address that has a proxy through it, and any other
// (a sentinel) directly.
func viaProxies(proxies map[string]*faultproxy.Proxy) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if p, ok := proxies[addr]; ok {
			addr = p.Addr()
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
}

// holdNext holds the next command through each proxy, and returns a func
// that lets them land once their client gave up on them and closed the
// connection, then waits until each server ran what landed.
func holdNext(t testing.TB, proxies []*faultproxy.Proxy, direct []redis.UniversalClient) func() {
	t.Helper()
	var held []*faultproxy.Held
	for _, p := range proxies {
		h := p.HoldNext(faultproxy.Upstream)
		t.Cleanup(h.Release)
		held = append(held, h)
	}
	return func() {
		t.Helper()
		for _, h := range held {
			select {
			case <-h.Captured():
			case <-time.After(5 * time.Second):
				t.Fatal("no command was held")
			}
			select {
			case <-h.Conn().ClientClosed():
			case <-time.After(5 * time.Second):
				t.Fatal("the client kept the connection of the held command")
			}
			h.Release()
		}
		// A command sent after the held ones reached the server runs after
		// them; the pause lets the proxy write them first.
		time.Sleep(50 * time.Millisecond)
		for _, c := range direct {
			if err := c.Ping(context.Background()).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// servers maps each store New made to the client of the server behind it.
var servers sync.Map

// writes is how many changes the server behind s has taken since it
// started (INFO's rdb_changes_since_last_save; it never saves).
func writes(t testing.TB, s core.Store) int64 {
	t.Helper()
	c, ok := servers.Load(s)
	if !ok {
		t.Fatal("writes: no server known for the store")
	}
	info, err := c.(*redis.Client).Info(context.Background(), "persistence").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "rdb_changes_since_last_save:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("writes: no rdb_changes_since_last_save in %q", info)
	return 0
}
