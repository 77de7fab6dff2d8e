package pgtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"
)

// Server is one PostgreSQL server on 127.0.0.1.
type Server struct {
	Addr string // 127.0.0.1:port, the same across restarts
	Port int

	acct account
	bin  string
	dir  string // the temporary directory, owned by the server's user
	data string // the data directory, inside dir

	mu     sync.Mutex
	pid    int           // the postmaster's; 0 when not running
	exited chan struct{} // closed when that postmaster has exited
	log    *ring
}

// Start starts a private server for tb, stopped at tb's cleanup.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s, err := start()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

// start builds a data directory from the binary's template and starts a
// postmaster on it, on a free port.
func start() (*Server, error) {
	tpl, err := template()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	s := &Server{acct: tpl.acct, bin: tpl.bin, dir: dir, data: filepath.Join(dir, "data"), log: newRing(40)}
	if err := tpl.copyTo(s.dir, s.data); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	// A free port can be taken by someone else between the probe and the
	// postmaster's bind: try a few.
	for range 5 {
		if s.Port, err = freePort(); err != nil {
			continue
		}
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port))
		if err = s.launch(); err == nil {
			return s, nil
		}
	}
	_ = os.RemoveAll(dir)
	return nil, fmt.Errorf("pgtest: could not start postgres: %w", err)
}

// launch starts the postmaster and waits until it accepts connections.
func (s *Server) launch() error {
	cmd := s.acct.daemon(filepath.Join(s.bin, "postgres"),
		"-D", s.data,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "port="+strconv.Itoa(s.Port),
		"-c", "unix_socket_directories="+s.dir,
		"-c", "fsync=off",
		"-c", "full_page_writes=off",
		"-c", "max_connections=400",
		"-c", "log_min_messages=warning",
		"-c", "log_min_error_statement=panic",
	)
	out, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	cmd.Stdout = nil
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			s.log.add(sc.Text())
		}
	}()
	go func() {
		<-logDone
		_ = cmd.Wait()
		close(exited)
	}()
	s.mu.Lock()
	s.pid, s.exited = cmd.Process.Pid, exited
	s.mu.Unlock()
	if err := s.waitReady(exited); err != nil {
		s.Kill()
		return fmt.Errorf("%w; postgres said: %s", err, s.log.String())
	}
	return nil
}

func (s *Server) waitReady(exited <-chan struct{}) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return errors.New("postgres exited during start-up")
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c, err := pgx.Connect(ctx, s.ConnString("postgres"))
		if err == nil {
			err = c.Ping(ctx)
			_ = c.Close(ctx)
		}
		cancel()
		if err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("postgres on %s not ready after 30s", s.Addr)
}

// ConnString is the connection string of database db on s, over TCP.
func (s *Server) ConnString(db string) string {
	return fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable&connect_timeout=5", s.Addr, db)
}

// running returns the postmaster's pid and exit channel, or 0.
func (s *Server) running() (int, chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pid, s.exited
}

// Kill stops the server as a power cut would: SIGKILL to the postmaster and
// every backend. Restart brings it back on the same data, after crash
// recovery. It is safe to call when the server is down.
func (s *Server) Kill() {
	pid, exited := s.running()
	if pid == 0 {
		return
	}
	signalAll(pid, syscall.SIGKILL)
	<-exited
	s.mu.Lock()
	s.pid = 0
	s.mu.Unlock()
}

// StopImmediate is `pg_ctl stop -m immediate`: the server quits without a
// shutdown checkpoint, its clients cut off, and recovers at Restart.
func (s *Server) StopImmediate(tb testing.TB) {
	tb.Helper()
	s.pgCtlStop(tb, "immediate")
}

// Stop is `pg_ctl stop -m fast`: clients are cut off, the server shuts
// down cleanly.
func (s *Server) Stop(tb testing.TB) {
	tb.Helper()
	s.pgCtlStop(tb, "fast")
}

func (s *Server) pgCtlStop(tb testing.TB, mode string) {
	tb.Helper()
	pid, exited := s.running()
	if pid == 0 {
		return
	}
	signalAll(pid, syscall.SIGCONT)
	cmd := s.acct.command(filepath.Join(s.bin, "pg_ctl"), "stop", "-D", s.data, "-m", mode, "-w", "-t", "30")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("pgtest: pg_ctl stop -m %s: %v: %s", mode, err, out)
	}
	<-exited
	s.mu.Lock()
	s.pid = 0
	s.mu.Unlock()
}

// Restart starts the server again on the same port and data after Kill,
// StopImmediate or Stop.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	if pid, _ := s.running(); pid != 0 {
		tb.Fatal("pgtest: Restart of a server that is running")
	}
	var err error
	// The killed backends may hold the old shared memory, and the old
	// socket may linger, for a moment.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if err = s.launch(); err == nil {
			return
		}
	}
	tb.Fatalf("pgtest: restart on %s: %v", s.Addr, err)
}

// Pause freezes the postmaster and every backend (SIGSTOP): connections
// stay open and nothing answers.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume undoes Pause (SIGCONT).
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	if pid, _ := s.running(); pid != 0 {
		signalAll(pid, sig)
	}
}

// Close stops the server and removes its directory. The server shuts down
// at once (its data is thrown away) but as itself, so that it gives back
// its shared memory; one that was killed has it removed here.
func (s *Server) Close() {
	if pid, exited := s.running(); pid != 0 {
		signalAll(pid, syscall.SIGCONT)
		_ = syscall.Kill(pid, syscall.SIGQUIT) // immediate shutdown
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
		}
		s.Kill()
	}
	s.removeShm()
	_ = os.RemoveAll(s.dir)
}

// removeShm removes the System V segment a killed postmaster left behind:
// postmaster.pid names it on its seventh line.
func (s *Server) removeShm() {
	b, err := os.ReadFile(filepath.Join(s.data, "postmaster.pid"))
	if err != nil {
		return
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 7 {
		return
	}
	f := strings.Fields(lines[6])
	if len(f) != 2 {
		return
	}
	if id, err := strconv.Atoi(f[1]); err == nil {
		_, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil)
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

// ring keeps the last lines the server logged, for error messages.
type ring struct {
	mu    sync.Mutex
	lines []string
	max   int
}

func newRing(n int) *ring { return &ring{max: n} }

func (r *ring) add(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.lines) == r.max {
		r.lines = r.lines[1:]
	}
	r.lines = append(r.lines, line)
}

func (r *ring) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.lines, " | ")
}
