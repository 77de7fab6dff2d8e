package etcdstore_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/etcdstore"
	"github.com/reqlock/reqlock/internal/etcdtest"
	"github.com/reqlock/reqlock/internal/permittest"
)

// The semaphore's rows on etcd, as internal/safety's on Redis: three
// permits of one key (internal/permittest), taken by instances while a
// holder process is killed or stopped, an instance's bytes are delayed, or
// the cluster's leader is killed and restarted. Checked: never more than
// three holders trusting their permits at once, and no stale write taken by
// the register fenced for three permits. The holder processes are this
// test binary, made instances by TestMain (permittest.Child).

const (
	semN = 3
	// semTTL: etcd leases count whole seconds.
	semTTL   = time.Second
	semLoad  = 3 * time.Second
	semQuick = 3 * time.Millisecond
	semHold  = 300 * time.Millisecond
)

func TestSafetySemaphore(t *testing.T) {
	if testing.Short() {
		t.Skip("the semaphore's safety rows run faults on etcd for a quarter of a minute")
	}
	type scenario struct {
		name    string
		members int
		proxy   bool
		run     func(t *testing.T, r *permittest.Run, c *etcdtest.Cluster) permittest.Expect
	}
	var rows []permittest.Row
	for _, sc := range []scenario{
		{"no faults, 4 instances + 2 processes", 1, false, func(t *testing.T, r *permittest.Run, c *etcdtest.Cluster) permittest.Expect {
			r.Spawn("p1", c.Endpoints(), semQuick)
			r.Spawn("p2", c.Endpoints(), semQuick)
			time.Sleep(semLoad)
			return permittest.Expect{}
		}},
		{"holder process killed (kill -9) mid-hold, twice", 1, false, func(t *testing.T, r *permittest.Run, c *etcdtest.Cluster) permittest.Expect {
			for _, name := range []string{"p1", "p2"} {
				p := r.Spawn(name, c.Endpoints(), semHold)
				if !r.Held(name, 15*time.Second) {
					t.Fatalf("process %s never held a permit", name)
				}
				time.Sleep(semHold / 4)
				p.Kill()
				time.Sleep(semLoad / 2)
			}
			return permittest.Expect{}
		}},
		{"holder process SIGSTOPped for 2 leases mid-hold", 1, false, func(t *testing.T, r *permittest.Run, c *etcdtest.Cluster) permittest.Expect {
			p := r.Spawn("p1", c.Endpoints(), semHold)
			for until := time.Now().Add(semLoad); time.Now().Before(until); {
				if !r.Held("p1", 15*time.Second) {
					t.Fatal("the process never held a permit")
				}
				time.Sleep(semHold / 8)
				p.Pause(2 * semTTL)
				time.Sleep(semTTL / 2)
			}
			return permittest.Expect{Refused: true}
		}},
		{"2 of 6 instances' bytes delayed past the lease, on and off", 1, true, func(t *testing.T, r *permittest.Run, c *etcdtest.Cluster) permittest.Expect {
			m := c.Members[0]
			for _, n := range []string{"slow1", "slow2"} {
				r.StartLocal(n, etcdstore.New(etcdtest.NewClient(t, m.Endpoint())), semQuick)
			}
			p := m.ClientProxy()
			for until, on := time.Now().Add(semLoad), true; time.Now().Before(until); on = !on {
				d := time.Duration(0)
				if on {
					d = semTTL + 100*time.Millisecond
				}
				p.Delay(faultproxy.Upstream, d)
				time.Sleep(600 * time.Millisecond)
			}
			p.Heal()
			return permittest.Expect{}
		}},
		{"the leader of 3 members killed (kill -9) and restarted while held", 3, false, func(t *testing.T, r *permittest.Run, c *etcdtest.Cluster) permittest.Expect {
			for until := time.Now().Add(semLoad); time.Now().Before(until); {
				if !r.Held("a", 15*time.Second) {
					t.Fatal("no permit held")
				}
				l := c.Leader(t)
				l.Kill()
				time.Sleep(semTTL)
				l.Restart(t)
			}
			return permittest.Expect{}
		}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			var opts []etcdtest.Option
			if sc.proxy {
				opts = append(opts, etcdtest.WithProxy())
			}
			c := etcdtest.StartCluster(t, sc.members, opts...)
			r := permittest.NewRun(t, semN, semTTL)
			for i, n := range []string{"a", "b", "c"} {
				m := c.Members[i%len(c.Members)]
				r.StartLocal(n, etcdstore.New(etcdtest.NewClient(t, m.DirectEndpoint())), semQuick)
			}
			// A fourth, on every member: more instances than permits.
			var direct []string
			for _, m := range c.Members {
				direct = append(direct, m.DirectEndpoint())
			}
			r.StartLocal("d", etcdstore.New(etcdtest.NewClient(t, direct...)), semQuick)
			res := r.Check(sc.run(t, r, c))
			rows = append(rows, permittest.Row{Scenario: sc.name, Store: fmt.Sprintf("etcd (%d)", sc.members), Result: res})
		})
	}
	t.Logf("semaphore safety table:\n%s", permittest.Table(semN, rows))
}

// semChildStore is a holder process's store: etcd at addrs.
func semChildStore(addrs []string) (core.Store, func()) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: addrs, DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		fmt.Fprintln(os.Stderr, "etcdstore semaphore child:", err)
		os.Exit(2)
	}
	return etcdstore.New(cli), func() { _ = cli.Close() }
}
