package redistest

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// CLIHint is what a test prints when redis-cli is missing.
const CLIHint = "redis-cli not found in PATH; install it with `apt-get update && apt-get install -y redis-tools` " +
	"(the redis-server package brings it too)"

// Cluster is a Redis Cluster of masters only, on 127.0.0.1, made with
// `redis-cli --cluster create`. Its servers stop when the test ends.
type Cluster struct {
	t       testing.TB
	Servers []*Server
	Addrs   []string
	nodes   []*redis.Client // one plain client per server, same order
}

// StartCluster starts masters (at least 3) cluster-enabled servers without
// persistence, joins them with `redis-cli --cluster create`, and waits until
// every node reports the cluster healthy.
func StartCluster(t testing.TB, masters int) *Cluster {
	t.Helper()
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Fatal(CLIHint)
	}
	if masters < 3 {
		t.Fatalf("redistest: a cluster needs at least 3 masters, not %d", masters)
	}
	c := &Cluster{t: t}
	for range masters {
		// The bus port defaults to port+10000, which may be taken or past
		// 65535; pick a free one explicitly.
		bus, err := freePort()
		if err != nil {
			t.Fatalf("redistest: no free port: %v", err)
		}
		s := Start(t,
			"--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf", // in the server's own temp dir
			"--cluster-port", strconv.Itoa(bus),
			"--cluster-node-timeout", "5000",
		)
		nc := redis.NewClient(ClientOptions(s.Addr))
		t.Cleanup(func() { _ = nc.Close() })
		c.Servers = append(c.Servers, s)
		c.Addrs = append(c.Addrs, s.Addr)
		c.nodes = append(c.nodes, nc)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := append([]string{"--cluster", "create"}, c.Addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.CommandContext(ctx, "redis-cli", args...).CombinedOutput(); err != nil {
		t.Fatalf("redistest: redis-cli --cluster create: %v\n%s", err, out)
	}
	c.waitHealthy(ctx)
	return c
}

// waitHealthy polls until every node says cluster_state:ok and knows all
// the others: redis-cli returns once the configuration agrees, but gossip may
// still be settling.
func (c *Cluster) waitHealthy(ctx context.Context) { c.waitHealthyFor(ctx, c.t) }

// WaitHealthy is waitHealthy for a test of t's own, within 30 s: after
// servers were paused past the node timeout, the cluster needs a moment to
// clear the failures it saw.
func (c *Cluster) WaitHealthy(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c.waitHealthyFor(ctx, t)
}

// Restart kills every master and starts it again on its port, empty, with
// the cluster configuration it had (nodes.conf stays in its directory):
// the cluster comes back with the same nodes and slots, as after a power
// cut without persistence. It returns once the cluster is healthy.
func (c *Cluster) Restart(t testing.TB) {
	t.Helper()
	for _, s := range c.Servers {
		s.Kill()
	}
	for _, s := range c.Servers {
		var err error
		for range 50 { // the old socket may linger for a moment
			if err = s.launch(); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("redistest: restart on %s: %v", s.Addr, err)
		}
	}
	c.WaitHealthy(t)
}

func (c *Cluster) waitHealthyFor(ctx context.Context, t testing.TB) {
	t.Helper()
	want := fmt.Sprintf("cluster_known_nodes:%d", len(c.Servers))
	for i, nc := range c.nodes {
		for {
			info, err := nc.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, want) {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("redistest: cluster node %s not healthy: %v %q", c.Addrs[i], err, info)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// ClusterOptions are the options tests use for a cluster client: context
// deadlines reach the socket, as reqlock's docs ask.
func ClusterOptions(addrs []string) *redis.ClusterOptions {
	return &redis.ClusterOptions{
		Addrs:                 addrs,
		ContextTimeoutEnabled: true,
		DialTimeout:           time.Second,
		ReadTimeout:           2 * time.Second,
		WriteTimeout:          2 * time.Second,
	}
}

// Client returns a cluster client, closed at the end of the test.
func (c *Cluster) Client(t testing.TB) *redis.ClusterClient {
	t.Helper()
	cc := redis.NewClusterClient(ClusterOptions(c.Addrs))
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// node is a plain client for one of the masters.
func (c *Cluster) node(s *Server) *redis.Client {
	for i, cs := range c.Servers {
		if cs == s {
			return c.nodes[i]
		}
	}
	c.t.Fatalf("redistest: %s is not in this cluster", s.Addr)
	return nil
}

// Owner returns the master that serves slot.
func (c *Cluster) Owner(ctx context.Context, slot int) (*Server, error) {
	slots, err := c.nodes[0].ClusterSlots(ctx).Result()
	if err != nil {
		return nil, err
	}
	for _, r := range slots {
		if int(r.Start) <= slot && slot <= int(r.End) && len(r.Nodes) > 0 {
			for _, s := range c.Servers {
				if s.Addr == r.Nodes[0].Addr {
					return s, nil
				}
			}
		}
	}
	return nil, fmt.Errorf("redistest: no owner for slot %d", slot)
}

// KeyOwner returns key's hash slot and the master that serves it now.
func (c *Cluster) KeyOwner(t testing.TB, key string) (slot int, owner *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := c.nodes[0].ClusterKeySlot(ctx, key).Result()
	if err != nil {
		t.Fatalf("redistest: CLUSTER KEYSLOT %q: %v", key, err)
	}
	if owner, err = c.Owner(ctx, int(s)); err != nil {
		t.Fatal(err)
	}
	return int(s), owner
}

// Others returns the masters other than s, in the cluster's order.
func (c *Cluster) Others(s *Server) []*Server {
	var out []*Server
	for _, o := range c.Servers {
		if o != s {
			out = append(out, o)
		}
	}
	return out
}

// MoveSlot migrates slot, with every key in it, to master to, the way
// `redis-cli --cluster reshard` does it: IMPORTING/MIGRATING, MIGRATE the
// keys, then SETSLOT NODE everywhere. Clients that cached the old owner get
// MOVED afterwards.
func (c *Cluster) MoveSlot(t testing.TB, slot int, to *Server) {
	t.Helper()
	c.BeginMove(t, slot, to)()
}

// BeginMove starts moving slot to master to and stops halfway: the slot is
// MIGRATING on its owner and IMPORTING on to, so the owner answers ASK for
// keys it does not have. The returned func finishes the move as MoveSlot
// does; call it before the test ends.
func (c *Cluster) BeginMove(t testing.TB, slot int, to *Server) (finish func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	from, err := c.Owner(ctx, slot)
	if err != nil {
		t.Fatal(err)
	}
	if from == to {
		t.Fatalf("redistest: slot %d is already on %s", slot, to.Addr)
	}
	src, dst := c.node(from), c.node(to)
	srcID, err := src.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		t.Fatal(err)
	}
	dstID, err := dst.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("redistest: moving slot %d: %v", slot, err)
		}
	}
	must(dst.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID).Err())
	must(src.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", dstID).Err())
	return func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for range 10_000 { // bounded: 100 keys a batch
			keys, err := src.ClusterGetKeysInSlot(ctx, slot, 100).Result()
			must(err)
			if len(keys) == 0 {
				break
			}
			args := []any{"MIGRATE", "127.0.0.1", to.Port, "", 0, 5000, "KEYS"}
			for _, k := range keys {
				args = append(args, k)
			}
			must(src.Do(ctx, args...).Err())
		}
		// The new owner first, then the old one, then the rest: the order
		// redis-cli uses, so that no node points at a node that disowns the
		// slot.
		must(dst.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", dstID).Err())
		must(src.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", dstID).Err())
		for _, s := range c.Servers {
			if s != from && s != to {
				must(c.node(s).Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", dstID).Err())
			}
		}
	}
}

// FlushAll empties every master.
func (c *Cluster) FlushAll(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i, nc := range c.nodes {
		if err := nc.FlushAll(ctx).Err(); err != nil {
			t.Fatalf("redistest: FLUSHALL on %s: %v", c.Addrs[i], err)
		}
	}
}
