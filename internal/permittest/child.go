package permittest

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
const childEnv = "REQLOCK_PERMITTEST_CHILD"

// childLife bounds a child that nobody killed.
const childLife = 2 * time.Minute

type childConfig struct {
	Name     string        `json:"name"`
	N        int           `json:"n"`
	TTL      time.Duration `json:"ttl"`
	Pause    time.Duration `json:"pause"`
	Addrs    []string      `json:"addrs"`
	Register string        `json:"register"`
}

// Child makes this process an instance when the parent started it as one
// (Spawn): it takes permits of Key with a Semaphore over the store that
// newStore builds from the parent's addresses, writing its events to
// stdout, until it is killed, and then reports true. In any other process
// it returns false at once. A package calls it first thing in its TestMain,
// or in the test that spawns children.
func Child(newStore func(addrs []string) (core.Store, func())) bool {
	cfg := os.Getenv(childEnv)
	if cfg == "" {
		return false
	}
	var c childConfig
	if err := json.Unmarshal([]byte(cfg), &c); err != nil {
		fmt.Fprintf(os.Stderr, "permittest child: bad config: %v\n", err)
		os.Exit(2)
	}
	s, closeStore := newStore(c.Addrs)
	defer closeStore()
	out := &jsonLines{enc: json.NewEncoder(os.Stdout)}
	h := &holder{who: c.Name, sem: newSemaphore(s, c.N, c.TTL, c.Name), ttl: c.TTL, w: newRemote(c.Register), emit: out.emit, pause: c.Pause}
	ctx, cancel := context.WithTimeout(context.Background(), childLife)
	defer cancel()
	h.run(ctx)
	return true
}

// Proc is a child instance.
type Proc struct {
	name string
	cmd  *exec.Cmd
}

// Spawn starts a child instance named name: the running test's binary,
// running only the running test, which (or whose TestMain) must call
// Child first. Its store is built from addrs; it holds each permit for up
// to pause between its two writes. It is killed when the run stops.
func (r *Run) Spawn(name string, addrs []string, pause time.Duration) *Proc {
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
	b, _ := json.Marshal(childConfig{Name: name, N: r.N, TTL: r.TTL, Pause: pause, Addrs: addrs, Register: r.serving})
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
	done := make(chan struct{})
	go func() {
		defer close(done)
		decode(stdout, r.Add)
	}()
	r.onStop(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		<-done
		_ = cmd.Wait()
	})
	return &Proc{name: name, cmd: cmd}
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

// Name is the instance's name.
func (p *Proc) Name() string { return p.name }

// Kill ends the instance at once (SIGKILL): its permit stays until its
// lease runs out.
func (p *Proc) Kill() { _ = p.cmd.Process.Signal(syscall.SIGKILL) }

// Pause stops the instance (SIGSTOP) for d, then continues it.
func (p *Proc) Pause(d time.Duration) {
	_ = p.cmd.Process.Signal(syscall.SIGSTOP)
	time.Sleep(d)
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
}
