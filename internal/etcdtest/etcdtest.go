// Package etcdtest starts real etcd servers for tests: Debian's etcd
// (package etcd-server), one member or several on loopback, on free ports
// with temporary data directories, stopped at cleanup. A member can be
// killed, restarted, paused with SIGSTOP, or put behind faultproxy so that
// a test can partition it.
package etcdtest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Binary is the etcd executable the helpers run.
const Binary = "etcd"

// Timing of the members' Raft: short, so that a test's elections take a
// fraction of a second, and long enough for a loaded -race run. The least
// lease etcd grants follows from them: 1.5 election timeouts, rounded up
// to a whole second, so 1s.
const (
	HeartbeatInterval = 50 * time.Millisecond
	ElectionTimeout   = 500 * time.Millisecond
)

// T is what the helpers need of a test: a testing.TB, or a Main for a
// TestMain that starts a member for the package's examples.
type T interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// Main is a T for TestMain, whose examples have no testing.T: Fatalf
// panics, and Done runs the clean-ups.
type Main struct{ cleanups []func() }

func (*Main) Helper()                           {}
func (*Main) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (m *Main) Cleanup(f func())                { m.cleanups = append(m.cleanups, f) }

// Done runs the clean-ups, last first.
func (m *Main) Done() {
	for i := len(m.cleanups) - 1; i >= 0; i-- {
		m.cleanups[i]()
	}
	m.cleanups = nil
}

// Cluster is a set of etcd members started by a test.
type Cluster struct {
	t       T
	Members []*Member
	proxied bool
	token   string // the cluster's initial token, the same for every member
}

// Member is one etcd process.
type Member struct {
	Name string
	c    *Cluster
	dir  string

	clientAddr, peerAddr string            // where etcd listens
	clientProxy          *faultproxy.Proxy // nil unless proxied
	peerProxy            *faultproxy.Proxy // nil unless proxied
	initialCluster       string            // set once all members are known

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// Option changes how a cluster is started.
type Option func(*Cluster)

// WithProxy puts every member's client and peer traffic behind a
// faultproxy, so that a test can delay, hold or cut it (see
// Member.Partition and Member.ClientProxy).
func WithProxy() Option { return func(c *Cluster) { c.proxied = true } }

// Start starts one member and returns its cluster; it is stopped at cleanup.
func Start(t T, opts ...Option) *Cluster { return StartCluster(t, 1, opts...) }

// StartCluster starts n members on loopback and waits until the cluster
// serves requests; they are stopped and their data removed at cleanup. It
// fails t, saying how to install it, when etcd is not installed.
//
// A port found free can be taken by another process before etcd binds it,
// and a member then exits at once: the cluster is started again on fresh
// ports, a few times.
func StartCluster(t T, n int, opts ...Option) *Cluster {
	t.Helper()
	if _, err := exec.LookPath(Binary); err != nil {
		t.Fatalf("etcdtest: %s not found in PATH (apt-get install etcd-server): %v", Binary, err)
	}
	for attempt := 1; ; attempt++ {
		c, exited := startCluster(t, n, opts...)
		if exited == "" {
			return c
		}
		c.stopAll()
		if attempt == 3 {
			t.Fatalf("etcdtest: %s", exited)
		}
	}
}

// startCluster is one try of StartCluster; exited, when not "", says which
// member exited at start and why.
func startCluster(t T, n int, opts ...Option) (c *Cluster, exited string) {
	t.Helper()
	c = &Cluster{t: t}
	for _, o := range opts {
		o(c)
	}
	var peers []string
	c.token = fmt.Sprintf("etcdtest-%d-%d", os.Getpid(), time.Now().UnixNano())
	for i := range n {
		m := &Member{Name: fmt.Sprintf("m%d", i), c: c, clientAddr: freeAddr(t), peerAddr: freeAddr(t)}
		dir, err := os.MkdirTemp(tempRoot(), "etcdtest-")
		if err != nil {
			t.Fatalf("etcdtest: %v", err)
		}
		m.dir = dir
		if c.proxied {
			tb, ok := t.(testing.TB)
			if !ok {
				t.Fatalf("etcdtest: WithProxy needs a testing.TB")
			}
			m.clientProxy = faultproxy.Start(tb, m.clientAddr)
			m.peerProxy = faultproxy.Start(tb, m.peerAddr)
		}
		peers = append(peers, m.Name+"=http://"+m.advertisedPeer())
		c.Members = append(c.Members, m)
	}
	t.Cleanup(c.stopAll)
	for _, m := range c.Members {
		m.initialCluster = strings.Join(peers, ",")
		m.start(t)
	}
	for _, m := range c.Members {
		if exited := m.waitHealthy(t, 30*time.Second); exited != "" {
			return c, exited
		}
	}
	return c, ""
}

// tempRoot is where data directories go: in memory when it can be, since
// etcd syncs every write to disk.
func tempRoot() string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		return "/dev/shm"
	}
	return os.TempDir()
}

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr(t T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("etcdtest: %v", err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func (m *Member) advertisedPeer() string {
	if m.peerProxy != nil {
		return m.peerProxy.Addr()
	}
	return m.peerAddr
}

// Endpoint is the member's client address, through its proxy when the
// cluster has one.
func (m *Member) Endpoint() string {
	if m.clientProxy != nil {
		return m.clientProxy.Addr()
	}
	return m.clientAddr
}

// DirectEndpoint is the member's own client address, never through a proxy.
func (m *Member) DirectEndpoint() string { return m.clientAddr }

// ClientProxy is the proxy in front of the member's client port; nil
// unless the cluster was started WithProxy.
func (m *Member) ClientProxy() *faultproxy.Proxy { return m.clientProxy }

// Endpoints are the client addresses of every member.
func (c *Cluster) Endpoints() []string {
	var eps []string
	for _, m := range c.Members {
		eps = append(eps, m.Endpoint())
	}
	return eps
}

// Client returns a client of every member, closed at cleanup.
func (c *Cluster) Client(t testing.TB) *clientv3.Client {
	t.Helper()
	return NewClient(t, c.Endpoints()...)
}

// NewClient returns a client of endpoints, closed at cleanup; its own log
// is off, and each dial gives up after a second.
func NewClient(t testing.TB, endpoints ...string) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: time.Second,
		Logger:      zap.NewNop(),
		// A member that does not answer is noticed, and another tried.
		DialKeepAliveTime:    time.Second,
		DialKeepAliveTimeout: time.Second,
	})
	if err != nil {
		t.Fatalf("etcdtest: client: %v", err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

func (m *Member) args() []string {
	return []string{
		"--name", m.Name,
		"--data-dir", filepath.Join(m.dir, "data"),
		"--listen-client-urls", "http://" + m.clientAddr,
		"--advertise-client-urls", "http://" + m.Endpoint(),
		"--listen-peer-urls", "http://" + m.peerAddr,
		"--initial-advertise-peer-urls", "http://" + m.advertisedPeer(),
		"--initial-cluster", m.initialCluster,
		"--initial-cluster-state", "new",
		"--initial-cluster-token", m.c.token,
		"--heartbeat-interval", fmt.Sprint(HeartbeatInterval.Milliseconds()),
		"--election-timeout", fmt.Sprint(ElectionTimeout.Milliseconds()),
		"--pre-vote",
		"--logger", "zap",
		"--log-outputs", filepath.Join(m.dir, "etcd.log"),
		"--log-level", "warn",
	}
}

// start runs the member's process; the data directory is kept across
// restarts, so a restarted member rejoins with what it had.
func (m *Member) start(t T) {
	t.Helper()
	cmd := exec.Command(Binary, m.args()...)
	cmd.Env = append(os.Environ(), "ETCD_UNSUPPORTED_ARCH=")
	if err := cmd.Start(); err != nil {
		t.Fatalf("etcdtest: start %s: %v", m.Name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	m.mu.Lock()
	m.cmd, m.done = cmd, done
	m.mu.Unlock()
}

// waitHealthy waits until the member answers /health with a leader; it
// returns what the member logged when it exited instead.
func (m *Member) waitHealthy(t T, within time.Duration) (exited string) {
	t.Helper()
	deadline := time.Now().Add(within)
	hc := &http.Client{Timeout: time.Second}
	for {
		resp, err := hc.Get("http://" + m.clientAddr + "/health")
		if err == nil {
			ok := resp.StatusCode == http.StatusOK
			resp.Body.Close()
			if ok {
				return ""
			}
		}
		m.mu.Lock()
		done := m.done
		m.mu.Unlock()
		select {
		case <-done:
			return fmt.Sprintf("%s exited at start:\n%s", m.Name, m.logTail())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("etcdtest: %s not healthy after %v:\n%s", m.Name, within, m.logTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (m *Member) logTail() string {
	b, _ := os.ReadFile(filepath.Join(m.dir, "etcd.log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// Kill stops the member at once with SIGKILL, as a crash would.
func (m *Member) Kill() {
	m.mu.Lock()
	cmd, done := m.cmd, m.done
	m.cmd = nil
	m.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGCONT) // a paused process dies too
	_ = cmd.Process.Kill()
	<-done
}

// Restart starts a killed member again on its data and ports, and waits
// until it is healthy.
func (m *Member) Restart(t T) {
	t.Helper()
	m.Kill()
	m.start(t)
	if exited := m.waitHealthy(t, 30*time.Second); exited != "" {
		t.Fatalf("etcdtest: restart: %s", exited)
	}
}

// Pause stops the member's process with SIGSTOP: its sockets stay open and
// nothing answers, as with a stalled machine.
func (m *Member) Pause() { m.signal(syscall.SIGSTOP) }

// Resume continues a paused member.
func (m *Member) Resume() { m.signal(syscall.SIGCONT) }

func (m *Member) signal(s syscall.Signal) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd != nil {
		_ = m.cmd.Process.Signal(s)
	}
}

// Partition cuts every connection to the member, from clients and peers
// alike: its proxies reset what is open and refuse new connections. What
// the member dials itself still goes out, as in a one-way partition: etcd
// peers read each other's messages on connections they dial, so a member
// cut off this way may still hear the others while nobody can reach it
// (requests a follower forwards to it over the peer link, say). It needs
// WithProxy.
func (m *Member) Partition() {
	if m.peerProxy == nil {
		m.c.t.Fatalf("etcdtest: Partition needs a cluster started WithProxy")
	}
	for _, p := range []*faultproxy.Proxy{m.peerProxy, m.clientProxy} {
		p.Refuse(true)
		p.Cut()
	}
}

// Heal undoes Partition and every other fault of the member's proxies.
func (m *Member) Heal() {
	for _, p := range []*faultproxy.Proxy{m.peerProxy, m.clientProxy} {
		if p != nil {
			p.Heal()
		}
	}
}

// Leader returns the member that leads the cluster now, waiting up to a
// few election timeouts for one.
func (c *Cluster) Leader(t T) *Member {
	t.Helper()
	deadline := time.Now().Add(20 * ElectionTimeout)
	for {
		for _, m := range c.Members {
			if id, l := m.status(); l != 0 && id == l {
				return m
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("etcdtest: no leader after %v", 20*ElectionTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// status asks the member itself, directly, for its status.
func (m *Member) status() (id, leader uint64) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{m.clientAddr}, DialTimeout: 300 * time.Millisecond, Logger: zap.NewNop()})
	if err != nil {
		return 0, 0
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	st, err := cli.Status(ctx, m.clientAddr)
	if err != nil {
		return 0, 0
	}
	return st.Header.MemberId, st.Leader
}

// Running reports whether the member's process was started and not killed.
func (m *Member) Running() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cmd != nil
}

func (c *Cluster) stopAll() {
	for _, m := range c.Members {
		m.Kill()
		_ = os.RemoveAll(m.dir)
	}
}

// Metric reads one counter or gauge without labels from the member's
// /metrics (etcd_server_proposals_committed_total, say); 0 when absent.
func (m *Member) Metric(t testing.TB, name string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + m.clientAddr + "/metrics")
	if err != nil {
		t.Fatalf("etcdtest: metrics: %v", err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f
		}
	}
	return 0
}
