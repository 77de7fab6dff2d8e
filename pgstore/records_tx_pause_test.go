package pgstore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/pgstore"
)

// The scenario of a payment run under Once, whose process is stopped
// (SIGSTOP) between its INSERT and its COMMIT for longer than its lease,
// while a second process runs the same Once. With WithTx the payment is
// made exactly once, run after run: the stopped holder cannot commit, and
// the second runs. Without it, with RefuseInDoubt, the second is told the
// first run is in doubt and pays nothing: no second row, whether or not the
// stopped holder's own COMMIT landed.
func TestOncePausedBetweenInsertAndCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("stops a child process 40 times")
	}
	srv := pgtest.Shared(t)
	conn := srv.NewDatabase(t)
	pool := pgtest.OpenPool(t, conn)
	ctx := context.Background()
	if err := pgstore.New(pool).Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "CREATE TABLE payments (job text NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	const runs = 20
	t.Run("WithTx", func(t *testing.T) {
		s := pgstore.New(pool, pgstore.WithTx())
		l := core.NewLocker(s, core.WithTTL(5*time.Second), core.WithRetry(backoff.Constant(20*time.Millisecond)))
		c := startChild(t, conn, true)
		for i := range runs {
			key := fmt.Sprintf("job:pay-tx-%d", i)
			out, err := c.pausedDuplicate(key, func(ctx context.Context) (core.Outcome, error) {
				return l.Once(ctx, key, time.Hour, func(ctx context.Context) ([]byte, error) {
					tx, ok := pgstore.Tx(ctx)
					if !ok {
						return nil, errors.New("no transaction under WithTx")
					}
					_, err := tx.Exec(ctx, "INSERT INTO payments (job) VALUES ($1)", key)
					return []byte("paid"), err
				})
			})
			if err != nil || string(out.Value) != "paid" {
				t.Fatalf("run %d: the duplicate's Once: %+v, %v; want it to pay or replay", i, out, err)
			}
			if n := payments(t, pool, key); n != 1 {
				t.Fatalf("run %d: %d payments committed, want exactly 1", i, n)
			}
		}
	})
	t.Run("RefuseInDoubt", func(t *testing.T) {
		s := pgstore.New(pool)
		l := core.NewLocker(s, core.WithTTL(5*time.Second), core.WithRetry(backoff.Constant(20*time.Millisecond)),
			core.WithDoubtPolicy(core.RefuseInDoubt))
		landed := 0
		c := startChild(t, conn, false)
		for i := range runs {
			key := fmt.Sprintf("job:pay-refuse-%d", i)
			ran := false
			out, err := c.pausedDuplicate(key, func(ctx context.Context) (core.Outcome, error) {
				return l.Once(ctx, key, time.Hour, func(ctx context.Context) ([]byte, error) {
					ran = true
					_, err := pool.Exec(ctx, "INSERT INTO payments (job) VALUES ($1)", key)
					return []byte("paid"), err
				})
			})
			if !errors.Is(err, core.ErrInDoubt) || !out.InDoubt || ran {
				t.Fatalf("run %d: the duplicate's Once: %+v, %v (ran: %v); want ErrInDoubt and no run", i, out, err, ran)
			}
			n := payments(t, pool, key)
			if n > 1 {
				t.Fatalf("run %d: %d payments committed, want at most 1", i, n)
			}
			landed += n
		}
		t.Logf("the stopped holder's own COMMIT landed in %d runs of %d; no duplicate paid", landed, runs)
	})
}

func payments(t *testing.T, pool *pgxpool.Pool, key string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM payments WHERE job = $1", key).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// The child's lease, and how long it is stopped: three leases.
const (
	childTTL   = 300 * time.Millisecond
	childPause = 3 * childTTL
)

// child is a child process of the test binary that pays keys under Once
// (see runOnceChild), one per line written to it.
type child struct {
	t        *testing.T
	cmd      *exec.Cmd
	in       io.WriteCloser
	inserted chan struct{}
	said     chan string
}

// startChild starts a child that pays with the store's transaction
// (withTx) or its own guarded one; it ends with the test.
func startChild(t *testing.T, conn string, withTx bool) *child {
	t.Helper()
	cfg, _ := json.Marshal(onceChild{Conn: conn, WithTx: withTx})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), onceChildEnv+"="+string(cfg))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{t: t, cmd: cmd, in: in, inserted: make(chan struct{}, 1), said: make(chan string, 1)}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			switch line := sc.Text(); {
			case line == "inserted":
				c.inserted <- struct{}{}
			case strings.HasPrefix(line, "once: "):
				c.said <- line
			}
		}
		close(c.said)
	}()
	t.Cleanup(func() {
		_ = in.Close() // the child exits at the end of its input
		if err := cmd.Wait(); err != nil {
			t.Errorf("the child: %v", err)
		}
	})
	return c
}

// pausedDuplicate has the child pay key under Once, stops it between its
// INSERT and its COMMIT, runs dup meanwhile, lets the child go on past its
// lease, and returns what dup returned once both are done.
func (c *child) pausedDuplicate(key string, dup func(context.Context) (core.Outcome, error)) (core.Outcome, error) {
	t := c.t
	t.Helper()
	if _, err := fmt.Fprintln(c.in, key); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.inserted:
	case <-time.After(20 * time.Second):
		t.Fatal("the child never inserted")
	}
	if err := c.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	type result struct {
		out core.Outcome
		err error
	}
	got := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := dup(ctx)
		got <- result{out, err}
	}()
	time.Sleep(childPause)
	if err := c.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	r := <-got
	line, ok := <-c.said
	if !ok {
		t.Fatal("the child ended before it said what Once returned")
	}
	t.Logf("%s: child %s; duplicate %+v, %v", key, line, r.out, r.err)
	return r.out, r.err
}

// onceChildEnv carries, to a child process of the test binary, what it is
// to pay: its presence makes the process the child.
const onceChildEnv = "PGSTORE_ONCE_CHILD"

type onceChild struct {
	Conn   string
	WithTx bool
}

// runOnceChild is the child's part of pausedDuplicate, when this process
// is one: for each key read from its input, it pays the key under Once as
// the scenario does, with the store's transaction (WithTx) or its own
// guarded one, says "inserted" between its INSERT and its COMMIT, and says
// what Once returned. It exits at the end of its input.
func runOnceChild() {
	cfg := os.Getenv(onceChildEnv)
	if cfg == "" {
		return
	}
	var c onceChild
	if err := json.Unmarshal([]byte(cfg), &c); err != nil {
		panic(err)
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, c.Conn)
	if err != nil {
		panic(err)
	}
	// Connections warm before the lease starts: a cold one takes longer
	// than the short lease under -race.
	var conns []*pgxpool.Conn
	for range 4 {
		pc, err := pool.Acquire(ctx)
		if err != nil {
			panic(err)
		}
		conns = append(conns, pc)
	}
	for _, pc := range conns {
		pc.Release()
	}
	var opts []pgstore.Option
	if c.WithTx {
		opts = append(opts, pgstore.WithTx())
	}
	s := pgstore.New(pool, opts...)
	l := core.NewLocker(s, core.WithTTL(childTTL), core.WithLogger(slog.New(slog.DiscardHandler)))
	// The stop lands in this gap, between the INSERT and the COMMIT.
	gap := func() { fmt.Println("inserted"); time.Sleep(childTTL / 2) }
	keys := bufio.NewScanner(os.Stdin)
	for keys.Scan() {
		key := keys.Text()
		out, err := l.Once(ctx, key, time.Hour, func(ctx context.Context) ([]byte, error) {
			if c.WithTx {
				tx, _ := pgstore.Tx(ctx)
				if _, err := tx.Exec(ctx, "INSERT INTO payments (job) VALUES ($1)", key); err != nil {
					return nil, err
				}
				gap()
				return []byte("paid"), nil
			}
			lk, _ := core.FromContext(ctx)
			tx, err := pool.Begin(ctx)
			if err != nil {
				return nil, err
			}
			defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
			if err := s.Guard(ctx, tx, lk); err != nil {
				return nil, err
			}
			if _, err := tx.Exec(ctx, "INSERT INTO payments (job) VALUES ($1)", key); err != nil {
				return nil, err
			}
			gap()
			return []byte("paid"), tx.Commit(ctx)
		})
		fmt.Printf("once: %q, %v (lock lost: %v)\n", out.Value, err, errors.Is(err, core.ErrLockLost))
	}
	pool.Close()
	os.Exit(0)
}
