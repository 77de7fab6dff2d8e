package safety

import (
	"encoding/json"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// proc is a worker process: this test binary, run again with a
// workerConfig. Its events join the parent's history as they happen.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed when its output has been read to the end
}

// spawn starts a worker process for cfg. onEvent, if not nil, sees each of
// its events after the history got it.
func (r *run) spawn(cfg workerConfig, onEvent func(Event)) *proc {
	t := r.t
	t.Helper()
	if !SharedClock {
		t.Skip("worker processes need a clock shared between processes (CLOCK_MONOTONIC on Linux)")
	}
	cfg.Key, cfg.Account = r.key, r.url()
	if cfg.Ops == 0 {
		cfg.Ops = maxOps
	}
	if cfg.For == 0 {
		cfg.For = time.Until(r.until)
	}
	b, _ := json.Marshal(cfg) // a workerConfig always marshals
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), workerEnv+"="+string(b))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = procAttr()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting worker process: %v", err)
	}
	p := &proc{name: cfg.Name, cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		_ = DecodeEvents(out, func(e Event) {
			r.hist.Add(e)
			if onEvent != nil {
				onEvent(e)
			}
		})
	}()
	t.Cleanup(func() {
		// A process still stopped when the test ends must not be left behind.
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		<-p.done
		_ = cmd.Wait()
	})
	r.procs = append(r.procs, p)
	return p
}

// signal sends sig to the worker process.
func (p *proc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("%v to %s: %v", sig, p.name, err)
	}
}

// wait waits for the process to finish its run, up to a minute past it.
func (p *proc) wait(t *testing.T) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		t.Errorf("worker process %s did not finish", p.name)
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}
