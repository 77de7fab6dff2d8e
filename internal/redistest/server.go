// Package redistest starts real redis-server processes for tests: each on a
// free loopback port, without persistence, stopped when the test ends (also
// when it fails or panics). A server can be stopped, restarted on the same
// port, and paused with SIGSTOP to play a Redis that hangs.
package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// InstallHint is what a test prints when redis-server is missing.
const InstallHint = "redis-server not found in PATH; install it with `apt-get update && apt-get install -y redis-server` " +
	"(./test.sh does this for you)"

// Server is one redis-server process on 127.0.0.1.
type Server struct {
	t    testing.TB
	Addr string // 127.0.0.1:port, stable across Restart
	Port int

	conf string // a config file to load first ("" for none), as sentinels need
	args []string
	env  []string // added to redis-server's environment (LD_PRELOAD, …)
	dir  string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// Start launches a redis-server and stops it at the end of the test. Extra
// arguments are passed to redis-server as configuration ("--maxmemory", "1mb").
func Start(t testing.TB, extra ...string) *Server {
	t.Helper()
	return start(t, "", extra...)
}

// StartEnv is Start with variables added to redis-server's environment:
// a Clock's Env runs it on that clock, for one.
func StartEnv(t testing.TB, env []string, extra ...string) *Server {
	t.Helper()
	return startEnv(t, "", env, extra...)
}

// start is Start with an optional config file, which redis-server wants as
// its first argument.
func start(t testing.TB, conf string, extra ...string) *Server {
	t.Helper()
	return startEnv(t, conf, nil, extra...)
}

func startEnv(t testing.TB, conf string, env []string, extra ...string) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal(InstallHint)
	}
	s := &Server{t: t, dir: t.TempDir(), conf: conf, args: extra, env: env}
	t.Cleanup(s.Kill)
	// A free port can be taken by someone else between our probe and Redis's
	// bind; try a few.
	var err error
	for range 5 {
		if s.Port, err = freePort(); err != nil {
			continue
		}
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port))
		if err = s.launch(); err == nil {
			return s
		}
	}
	t.Fatalf("redistest: could not start redis-server: %v", err)
	return nil
}

// StartN launches n independent servers (Redlock needs five).
func StartN(t testing.TB, n int, extra ...string) []*Server {
	t.Helper()
	out := make([]*Server, n)
	for i := range out {
		out[i] = Start(t, extra...)
	}
	return out
}

// Client returns a go-redis client for s, closed at the end of the test. It
// has ContextTimeoutEnabled, as reqlock's docs ask, so context deadlines reach
// the socket.
func (s *Server) Client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(ClientOptions(s.Addr))
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// ClientOptions are the options tests use for a client of addr.
func ClientOptions(addr string) *redis.Options {
	return &redis.Options{
		Addr:                  addr,
		ContextTimeoutEnabled: true,
		DialTimeout:           time.Second,
		ReadTimeout:           2 * time.Second,
		WriteTimeout:          2 * time.Second,
		MaxRetries:            -1, // a test that kills Redis wants to see the failure, not a retry
		DialerRetries:         1,  // a refused dial fails at once, not after five tries
	}
}

func (s *Server) launch() error {
	var args []string
	if s.conf != "" {
		args = append(args, s.conf)
	}
	args = append(append(args,
		"--port", strconv.Itoa(s.Port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", s.dir,
		"--daemonize", "no",
		"--loglevel", "warning",
	), s.args...)
	cmd := exec.Command("redis-server", args...)
	cmd.SysProcAttr = sysProcAttr()
	if s.env != nil {
		cmd.Env = append(os.Environ(), s.env...)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	var logMu sync.Mutex
	var logLines []string
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			logMu.Lock()
			logLines = append(logLines, sc.Text())
			logMu.Unlock()
		}
		_ = cmd.Wait()
		close(exited)
	}()
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()

	if err := waitReady(s.Addr, exited); err != nil {
		s.Kill()
		logMu.Lock()
		defer logMu.Unlock()
		return fmt.Errorf("%w; redis-server said: %s", err, strings.Join(logLines, " | "))
	}
	return nil
}

func waitReady(addr string, exited <-chan struct{}) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return errors.New("redis-server exited during start-up")
		default:
		}
		c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
		err := c.Ping(context.Background()).Err()
		_ = c.Close()
		if err == nil {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("redis-server on %s not ready after 10s", addr)
}

// Kill stops the server at once (SIGKILL), losing everything it held.
// It is safe to call more than once.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-exited
}

// Restart kills the server and starts an empty one on the same port, as a
// crash without persistence would.
func (s *Server) Restart() {
	s.t.Helper()
	s.Kill()
	var err error
	for range 50 { // the old socket may linger for a moment
		if err = s.launch(); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.t.Fatalf("redistest: restart on %s: %v", s.Addr, err)
}

// Pause freezes the process (SIGSTOP): connections stay open, nothing answers.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume undoes Pause (SIGCONT).
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		s.t.Fatalf("redistest: %v to a server that is not running", sig)
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatalf("redistest: %v: %v", sig, err)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Available reports whether redis-server can be found, for benchmarks and
// examples that would rather skip than fail.
func Available() bool {
	_, err := exec.LookPath("redis-server")
	return err == nil
}
