// Package redisserver starts a real redis-server for grpclock's tests, on a
// free loopback port, without persistence, killed when the test ends. (The
// root module's helper is internal to it, out of this module's reach.)
package redisserver

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is one redis-server process on 127.0.0.1.
type Server struct {
	Addr string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// Start launches a redis-server and kills it at the end of the test.
func Start(t testing.TB) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server not found in PATH; install it with `apt-get install -y redis-server`")
	}
	dir := t.TempDir()
	var err error
	for range 5 { // the probed port may be taken before Redis binds it
		var s *Server
		if s, err = launch(dir); err == nil {
			t.Cleanup(s.Kill)
			return s
		}
	}
	t.Fatalf("redisserver: could not start redis-server: %v", err)
	return nil
}

func launch(dir string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), exited: make(chan struct{})}
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no", "--loglevel", "warning")
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s.cmd = cmd
	go func() { _ = cmd.Wait(); close(s.exited) }()
	if err := s.waitReady(); err != nil {
		s.Kill()
		return nil, err
	}
	return s, nil
}

func (s *Server) waitReady() error {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		select {
		case <-s.exited:
			return fmt.Errorf("redis-server on %s exited during start-up", s.Addr)
		default:
		}
		c := redis.NewClient(&redis.Options{Addr: s.Addr, DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
		err := c.Ping(context.Background()).Err()
		_ = c.Close()
		if err == nil {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("redis-server on %s not ready after 10s", s.Addr)
}

// Client returns a client of s, closed at the end of the test. Its context
// deadlines reach the socket, and it does not retry: a test that kills
// Redis wants to see the failure.
func (s *Server) Client(t testing.TB) *redis.Client {
	c := redis.NewClient(&redis.Options{
		Addr: s.Addr, ContextTimeoutEnabled: true, MaxRetries: -1, DialerRetries: 1,
		DialTimeout: time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second,
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Kill stops the server at once (SIGKILL). It is safe to call more than
// once.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-s.exited
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
