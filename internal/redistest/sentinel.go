package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// MasterName is the name the sentinels of StartSentinel monitor.
const MasterName = "reqlock-test"

// Sentinel is one master, one replica and three sentinels on 127.0.0.1.
// Which of the two data servers is the master changes with Failover.
type Sentinel struct {
	t         testing.TB
	Data      []*Server // the initial master, then the replica
	Sentinels []*Server
	probe     *redis.SentinelClient
}

// StartSentinel starts the master, its replica and three sentinels (quorum
// 2), all without persistence, and waits until the sentinels see the replica,
// so that Failover can promote it at once.
func StartSentinel(t testing.TB) *Sentinel {
	t.Helper()
	// Diskless full sync waits 5s by default for more replicas to join; one
	// is all there will be. Both get the setting: either may become master.
	sync := []string{"--repl-diskless-sync-delay", "0"}
	master := Start(t, sync...)
	replica := Start(t, append(sync, "--replicaof", "127.0.0.1", strconv.Itoa(master.Port))...)
	s := &Sentinel{t: t, Data: []*Server{master, replica}}
	for range 3 {
		dir := t.TempDir()
		conf := filepath.Join(dir, "sentinel.conf") // sentinels rewrite it: one each
		body := fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d 2\n"+
			"sentinel down-after-milliseconds %[1]s 1000\n"+
			"sentinel failover-timeout %[1]s 10000\n", MasterName, master.Port)
		if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		s.Sentinels = append(s.Sentinels, start(t, conf, "--sentinel"))
	}
	s.probe = redis.NewSentinelClient(ClientOptions(s.Sentinels[0].Addr))
	t.Cleanup(func() { _ = s.probe.Close() })

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rc := redis.NewClient(ClientOptions(replica.Addr))
	defer rc.Close()
	s.waitFor(ctx, "the replica to be in sync", func() bool {
		info, err := rc.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "master_link_status:up")
	})
	s.waitFor(ctx, "the sentinel to see the replica", func() bool {
		reps, err := s.probe.Replicas(ctx, MasterName).Result()
		if err != nil || len(reps) == 0 {
			return false
		}
		return reps[0]["master-link-status"] == "ok" && !strings.Contains(reps[0]["flags"], "down")
	})
	return s
}

// waitFor polls cond every 20ms until it holds or ctx ends, which fails the test.
func (s *Sentinel) waitFor(ctx context.Context, what string, cond func() bool) {
	s.t.Helper()
	for !cond() {
		if ctx.Err() != nil {
			s.t.Fatalf("redistest: timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// FailoverOptions are the options tests use for a failover client of s.
func (s *Sentinel) FailoverOptions() *redis.FailoverOptions {
	return FailoverOptions(s.SentinelAddrs())
}

// SentinelAddrs are the sentinels' addresses.
func (s *Sentinel) SentinelAddrs() []string {
	addrs := make([]string, len(s.Sentinels))
	for i, sn := range s.Sentinels {
		addrs[i] = sn.Addr
	}
	return addrs
}

// FailoverOptions are the options of a failover client of the master
// StartSentinel's sentinels at addrs monitor, for a process that has only
// their addresses.
func FailoverOptions(addrs []string) *redis.FailoverOptions {
	return &redis.FailoverOptions{
		MasterName:            MasterName,
		SentinelAddrs:         addrs,
		ContextTimeoutEnabled: true,
		DialTimeout:           time.Second,
		ReadTimeout:           2 * time.Second,
		WriteTimeout:          2 * time.Second,
		MaxRetries:            -1,
	}
}

// Client returns a failover client (redis.NewFailoverClient) that follows
// the master through failovers, closed at the end of the test.
func (s *Sentinel) Client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewFailoverClient(s.FailoverOptions())
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Master returns the data server the sentinels currently call master.
func (s *Sentinel) Master(ctx context.Context) (*Server, error) {
	addr, err := s.probe.GetMasterAddrByName(ctx, MasterName).Result()
	if err != nil {
		return nil, err
	}
	for _, d := range s.Data {
		if d.Addr == net.JoinHostPort(addr[0], addr[1]) {
			return d, nil
		}
	}
	return nil, fmt.Errorf("redistest: sentinel names an unknown master %v", addr)
}

// Failover forces a failover (SENTINEL FAILOVER) and waits until it is
// complete: the sentinels name the other server, and that server has taken
// the master role. It returns the new master.
//
// Failover clients switch when the sentinels' +switch-master message reaches
// them, a moment later. The old master keeps taking writes from clients that
// have not switched yet until the sentinels make it a replica, which takes
// them about ten seconds; Failover does not wait for that.
func (s *Sentinel) Failover(t testing.TB) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	old, err := s.Master(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.probe.Failover(ctx, MasterName).Err(); err != nil {
		t.Fatalf("redistest: SENTINEL FAILOVER: %v", err)
	}
	var next *Server
	s.waitFor(ctx, "the sentinels to name a new master", func() bool {
		m, err := s.Master(ctx)
		if err != nil || m == old {
			return false
		}
		next = m
		return true
	})
	nc := redis.NewClient(ClientOptions(next.Addr))
	defer nc.Close()
	s.waitFor(ctx, "the new master to take its role", func() bool {
		role, err := nc.Do(ctx, "ROLE").Slice()
		return err == nil && len(role) > 0 && role[0] == "master"
	})
	return next
}
