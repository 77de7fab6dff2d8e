package leadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/reqlock/reqlock/core"
)

// childEnv carries a child instance's configuration, as JSON.
const childEnv = "REQLOCK_LEADTEST_CHILD"

// childLife bounds a child that nobody killed.
const childLife = 2 * time.Minute

type childConfig struct {
	Name     string        `json:"name"`
	Key      string        `json:"key"`
	TTL      time.Duration `json:"ttl"`
	Addrs    []string      `json:"addrs"`
	Register string        `json:"register"`
}

// Child makes this process an instance when the parent started it as one
// (Spawn): it leads the run's key with a Locker over the store that newStore builds
// from the parent's addresses, writing its events to stdout, until it is
// killed, and then reports true. In any other process it returns false at
// once. A test that spawns children calls it first thing.
func Child(newStore func(addrs []string) (core.Store, func())) bool {
	cfg := os.Getenv(childEnv)
	if cfg == "" {
		return false
	}
	var c childConfig
	if err := json.Unmarshal([]byte(cfg), &c); err != nil {
		fmt.Fprintf(os.Stderr, "leadtest child: bad config: %v\n", err)
		os.Exit(2)
	}
	s, closeStore := newStore(c.Addrs)
	defer closeStore()
	l := core.NewLocker(s, core.WithTTL(c.TTL), core.WithHolder(c.Name), quiet)
	out := &jsonLines{enc: json.NewEncoder(os.Stdout)}
	ctx, cancel := context.WithTimeout(context.Background(), childLife)
	defer cancel()
	_ = l.Lead(ctx, c.Key, Work(c.Name, newRemote(c.Register), out.emit))
	return true
}

// IsChild reports whether this process is a child instance (Spawn), so
// that a TestMain can skip the set-up only the parent needs.
func IsChild() bool { return os.Getenv(childEnv) != "" }

// proc is a child instance.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed when its output was read to the end
}

// Spawn starts a child instance named name: the running test's binary,
// running only the running test, which must call Child first. Its store is
// built from addrs.
func (r *Run) Spawn(name string, addrs []string) Instance {
	t := r.t
	t.Helper()
	if !sharedClock {
		t.Skip("child instances need a clock shared between processes (CLOCK_MONOTONIC on Linux)")
	}
	if r.serving == "" {
		base, stop, err := r.Reg.serve()
		if err != nil {
			t.Fatal(err)
		}
		r.serving = base
		t.Cleanup(stop)
	}
	b, _ := json.Marshal(childConfig{Name: name, Key: r.Key, TTL: r.TTL, Addrs: addrs, Register: r.serving})
	cmd := exec.Command(os.Args[0], "-test.run="+runPattern(t.Name()), "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+string(b))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = procAttr()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting child %s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		decode(stdout, r.Add)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		<-p.done
		_ = cmd.Wait()
	})
	return p
}

// runPattern is the -test.run pattern that selects exactly the test (or
// subtest) named name.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

func (p *proc) Name() string { return p.name }

func (p *proc) Kill() { _ = p.cmd.Process.Signal(syscall.SIGKILL) }

func (p *proc) Pause(d time.Duration) {
	_ = p.cmd.Process.Signal(syscall.SIGSTOP)
	time.Sleep(d)
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
}
