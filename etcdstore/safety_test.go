package etcdstore_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reqlock/reqlock/internal/etcdtest"
	"github.com/reqlock/reqlock/internal/safety"
)

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// safetyRow is what one scenario measured.
type safetyRow struct {
	name                      string
	holds, overlaps, possible int
	accepted, refused, stale  int
	beyondLease               int // holds whose Lost came after the next acquire: a paused holder
}

// The safety suite on a three-member cluster: workers on Lockers of their
// own take the lock, read a balance in etcd and write it back plus one
// under Guard, while a fault hits the cluster. Expected, and checked: no
// two holders that trusted their lock held it at once, and no write under
// Guard committed from a holder that no longer held the lock (a stale
// write). The rows are printed as a table.
func TestSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("the safety suite runs faults on a cluster for half a minute")
	}
	var rows []safetyRow
	scenarios := []struct {
		name  string
		proxy bool
		fault func(t *testing.T, c *etcdtest.Cluster) (heal func())
	}{
		{"leader killed", false, func(t *testing.T, c *etcdtest.Cluster) func() {
			m := c.Leader(t)
			m.Kill()
			return func() { m.Restart(t) }
		}},
		{"minority lost (1 of 3)", false, func(t *testing.T, c *etcdtest.Cluster) func() {
			m := follower(t, c)
			m.Kill()
			return func() { m.Restart(t) }
		}},
		{"majority lost (2 of 3)", false, func(t *testing.T, c *etcdtest.Cluster) func() {
			l := c.Leader(t)
			var down []*etcdtest.Member
			for _, m := range c.Members {
				if m != l {
					m.Kill()
					down = append(down, m)
				}
			}
			return func() {
				for _, m := range down {
					m.Restart(t)
				}
			}
		}},
		{"member partitioned (proxy)", true, func(t *testing.T, c *etcdtest.Cluster) func() {
			m := c.Leader(t)
			m.Partition()
			return m.Heal
		}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			rows = append(rows, runScenario(t, sc.name, sc.proxy, sc.fault, false))
		})
	}
	t.Run("holder SIGSTOP", func(t *testing.T) {
		rows = append(rows, runScenario(t, "holder SIGSTOP (process)", false, nil, true))
	})
	var b strings.Builder
	fmt.Fprintf(&b, "\n| scenario | holds | overlaps among trusted holds | possible | Lost after the next acquire (paused holder) | guarded writes accepted | refused | stale writes |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %d |\n", r.name, r.holds, r.overlaps, r.possible, r.beyondLease, r.accepted, r.refused, r.stale)
	}
	t.Log(b.String())
}

func follower(t *testing.T, c *etcdtest.Cluster) *etcdtest.Member {
	l := c.Leader(t)
	for _, m := range c.Members {
		if m != l {
			return m
		}
	}
	t.Fatal("no follower")
	return nil
}

// runScenario runs three in-process workers, each on a client of its own
// member, for six seconds, with fault applied from the second to the
// fourth; with proc, a fourth worker in a process of its own is stopped
// with SIGSTOP while it holds the lock, past its lease, and continued.
func runScenario(t *testing.T, name string, proxy bool, fault func(*testing.T, *etcdtest.Cluster) func(), proc bool) safetyRow {
	var opts []etcdtest.Option
	if proxy {
		opts = append(opts, etcdtest.WithProxy())
	}
	c := etcdtest.StartCluster(t, 3, opts...)
	h := safety.NewHistory(nil)
	lg := &ledger{}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i, m := range c.Members {
		w := newGuardedWorker(fmt.Sprintf("w%d", i), etcdtest.NewClient(t, m.Endpoint()), h, lg, 50*time.Millisecond)
		wg.Go(func() {
			for ctx.Err() == nil {
				w.cycle(ctx)
			}
		})
	}
	var procDone func()
	if proc {
		procDone = startHolderProcess(t, c, h, lg)
	}
	time.Sleep(2 * time.Second)
	if fault != nil {
		heal := fault(t, c)
		time.Sleep(2 * time.Second)
		heal()
	}
	time.Sleep(2 * time.Second)
	cancel()
	wg.Wait()
	if procDone != nil {
		procDone()
	}

	events := h.Events()
	holds := safety.Holds(events)
	// A holder trusted its lock unless its Lost fired only after another
	// took the lock: it was paused past its lease (a stopped process
	// cannot run its watchdog), and only fencing, here Guard, protects
	// from it.
	late := make(map[safety.Hold]bool)
	for _, l := range safety.CheckLostLatency(holds) {
		late[l.Hold] = true
	}
	var trusted, beyond []safety.Hold
	for _, hd := range holds {
		if late[hd] {
			beyond = append(beyond, hd)
		} else {
			trusted = append(trusted, hd)
		}
	}
	overlaps := safety.CheckOverlap(trusted)
	row := safetyRow{name: name, holds: len(holds), overlaps: safety.Definite(overlaps), possible: len(overlaps) - safety.Definite(overlaps)}
	for _, o := range overlaps {
		if !o.Possible {
			t.Errorf("%s", o)
		}
	}
	row.beyondLease = len(beyond)
	if proc && row.beyondLease == 0 {
		t.Error("the holder process was never stopped past its lease while holding")
	}
	if !proc && row.beyondLease > 0 {
		t.Errorf("%d holders heard of their loss after the next holder took the lock, without a paused process", row.beyondLease)
	}
	log := lg.sorted()
	row.accepted = len(log)
	for _, e := range events {
		if e.Kind == safety.Write && e.Type == safety.Fail {
			row.refused++
		}
	}
	for _, s := range safety.CheckStaleWrites(log) {
		row.stale++
		t.Errorf("%s", s)
	}
	if proc && row.refused == 0 {
		t.Error("the stopped holder's guarded write was never refused")
	}
	if row.holds == 0 {
		t.Error("no holds at all")
	}
	return row
}

// startHolderProcess runs a worker in a process of its own (this test
// binary), stops it with SIGSTOP once it holds the lock, for twice its
// lease, and continues it: it must learn of the loss, and its Guard-ed
// write must not commit. The returned func stops it and collects its
// history.
func startHolderProcess(t *testing.T, c *etcdtest.Cluster, h *safety.History, lg *ledger) func() {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), workerEnv+"="+strings.Join(c.Endpoints(), ","))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acquired := make(chan struct{}, 1)
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			if rest, ok := strings.CutPrefix(line, "W "); ok {
				var a = struct{ t, f, b, v int64 }{}
				if _, err := fmt.Sscan(rest, &a.t, &a.f, &a.b, &a.v); err == nil {
					lg.add(safety.Access{T: a.t, Worker: "proc", Write: true, Fence: uint64(a.f), Base: a.b, Value: a.v, Accepted: true})
				}
				continue
			}
			evs, err := safety.ReadEvents(line)
			if err != nil {
				continue
			}
			for _, e := range evs {
				h.Add(e)
				if e.Kind == safety.Acquire && e.Type == safety.OK {
					select {
					case acquired <- struct{}{}:
					default:
					}
				}
			}
		}
	}()
	// Stop it while it holds the lock, past its lease.
	go func() {
		select {
		case <-acquired:
		case <-time.After(5 * time.Second):
			return
		}
		_ = cmd.Process.Signal(syscall.SIGSTOP)
		time.Sleep(2 * workerTTL)
		_ = cmd.Process.Signal(syscall.SIGCONT)
	}()
	return func() {
		time.Sleep(2*workerTTL + time.Second) // whatever the pause, it is over
		_ = stdin.Close()
		<-read
		_ = cmd.Wait()
	}
}
