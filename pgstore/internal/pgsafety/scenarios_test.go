package pgsafety_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/internal/safety"
	"github.com/reqlock/reqlock/pgstore"
	"github.com/reqlock/reqlock/pgstore/internal/pgsafety"
)

// runFor is how long each scenario's workload runs.
const runFor = 2500 * time.Millisecond

// env is one scenario's server, database and workers.
type env struct {
	t       *testing.T
	srv     *pgtest.Server
	conn    string
	admin   *pgxpool.Pool
	guarded bool
	until   time.Time
	wg      sync.WaitGroup
}

func newEnv(t *testing.T, guarded bool) *env {
	srv := pgtest.Start(t)
	conn := srv.NewDatabase(t)
	admin := pgtest.OpenPool(t, conn, quick)
	ctx := context.Background()
	if err := pgstore.New(admin).Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, tablesSQL); err != nil {
		t.Fatal(err)
	}
	return &env{t: t, srv: srv, conn: conn, admin: admin, guarded: guarded, until: time.Now().Add(runFor)}
}

func quick(c *pgxpool.Config) { c.ConnConfig.ConnectTimeout = time.Second }

// goWorkers starts n goroutine workers on connString.
func (e *env) goWorkers(n int, prefix, connString string) {
	for i := range n {
		w := newWorker(fmt.Sprintf("%s%d", prefix, i), pgtest.OpenPool(e.t, connString, quick), e.guarded)
		e.wg.Go(func() { w.run("account", e.until) })
	}
}

// result waits for the workers and reads the ledger through the checkers.
func (e *env) result() row {
	e.wg.Wait()
	var ledger []pgsafety.Write
	var err error
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		ledger, err = readLedger(ctx, e.admin)
		cancel()
		if err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		e.t.Fatal(err)
	}
	log := pgsafety.Accesses(ledger)
	stale, lost := safety.CheckStaleWrites(log), safety.CheckLostUpdates(log)
	r := row{writes: len(ledger), stale: len(stale), lost: len(lost)}
	for _, s := range stale {
		r.found = append(r.found, s.String())
	}
	for _, l := range lost {
		r.found = append(r.found, l.String())
	}
	return r
}

type scenario struct {
	name string
	run  func(e *env)
	// unguardedStale: the fault is sure to make an unguarded holder write
	// after its successor, so that column must show it.
	unguardedStale bool
}

var scenarios = []scenario{
	{name: "postgres kill -9 + restart", run: func(e *env) {
		e.goWorkers(3, "w", e.conn)
		time.Sleep(600 * time.Millisecond)
		e.srv.Kill()
		time.Sleep(300 * time.Millisecond)
		e.srv.Restart(e.t)
		time.Sleep(600 * time.Millisecond)
		e.srv.StopImmediate(e.t)
		e.srv.Restart(e.t)
	}},
	{name: "SIGSTOP holder past its lease", unguardedStale: true, run: func(e *env) {
		e.goWorkers(2, "w", e.conn)
		e.stopHolder()
	}},
	{name: "SIGSTOP postgres past the lease", run: func(e *env) {
		e.goWorkers(3, "w", e.conn)
		time.Sleep(600 * time.Millisecond)
		e.srv.Pause()
		time.Sleep(3 * lease)
		e.srv.Resume()
	}},
	{name: "delayed bytes (proxy)", run: func(e *env) {
		p := faultproxy.Start(e.t, e.srv.Addr)
		e.goWorkers(2, "direct", e.conn)
		e.goWorkers(2, "slow", strings.Replace(e.conn, e.srv.Addr, p.Addr(), 1))
		for on := true; time.Now().Before(e.until); on = !on {
			d := time.Duration(0)
			if on {
				d = lease + 150*time.Millisecond
			}
			p.Delay(faultproxy.Upstream, d)
			time.Sleep(400 * time.Millisecond)
		}
		p.Delay(faultproxy.Upstream, 0)
	}},
}

// TestSafetyRows runs every scenario with and without Guard and prints the
// table; the guarded column must show no stale write and no lost update.
func TestSafetyRows(t *testing.T) {
	if !safety.SharedClock {
		t.Skip("worker processes need a clock shared between processes")
	}
	type line struct {
		name               string
		guarded, unguarded row
	}
	var table []line
	for _, sc := range scenarios {
		var ln line
		ln.name = sc.name
		for _, guarded := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/guarded=%v", sc.name, guarded), func(t *testing.T) {
				e := newEnv(t, guarded)
				sc.run(e)
				r := e.result()
				if guarded {
					ln.guarded = r
					if r.writes == 0 {
						t.Error(errNoWrites)
					}
					if r.stale != 0 || r.lost != 0 {
						t.Errorf("guarded writes: %d stale and %d lost updates committed, want 0: %v", r.stale, r.lost, r.found)
					}
				} else {
					ln.unguarded = r
					if sc.unguardedStale && r.stale == 0 {
						t.Errorf("unguarded: no stale write, so the fault did not bite: %+v", r)
					}
				}
			})
		}
		table = append(table, ln)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-32s | %-20s | %-20s\n", "", "Guard", "no Guard")
	fmt.Fprintf(&b, "%-32s | %-20s | %-20s\n", "PostgreSQL scenario", "writes  stale  lost", "writes  stale  lost")
	for _, ln := range table {
		fmt.Fprintf(&b, "%-32s | %-20s | %-20s\n", ln.name, ln.guarded, ln.unguarded)
	}
	t.Log(b.String())
}

// stopHolder runs a worker process, stops it (SIGSTOP) while it holds the
// lock, between its read and its write, for several leases, and lets it
// go on.
func (e *env) stopHolder() {
	t := e.t
	cfg, _ := json.Marshal(procConfig{Conn: e.conn, Guarded: e.guarded, Until: e.until})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), procEnv+"="+string(cfg))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	holding := make(chan struct{}, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "held ") {
				select {
				case holding <- struct{}{}:
				default:
				}
			}
		}
	}()
	e.wg.Go(func() {
		<-done
		_ = cmd.Wait()
	})
	time.Sleep(300 * time.Millisecond)
	for len(holding) > 0 { // a hold announced before now may be over
		<-holding
	}
	select {
	case <-holding:
	case <-time.After(5 * time.Second):
		t.Fatal("the worker process never held the lock")
	}
	_ = cmd.Process.Signal(syscall.SIGSTOP)
	time.Sleep(4 * lease)
	_ = cmd.Process.Signal(syscall.SIGCONT)
}
