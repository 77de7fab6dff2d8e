package pgstore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/internal/httpcases/frameworks"
	"github.com/reqlock/reqlock/pgstore"
)

// The scenario of TestOncePausedBetweenInsertAndCommit over HTTP, on two
// instances of an app with Replay: one instance is a child process,
// stopped (SIGSTOP) between its handler's INSERT and its COMMIT for three
// leases, while the client's retry goes to the other. With WithTx the
// payment is made exactly once, run after run, and the retry gets a
// payment's response; without it, with RefuseInDoubt, the retry gets 409
// in_doubt and pays nothing.
func TestReplayPausedBetweenInsertAndCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("stops a child process 40 times")
	}
	const runs = 20
	for _, c := range []struct {
		name   string
		withTx bool
	}{{"WithTx", true}, {"RefuseInDoubt", false}} {
		t.Run(c.name, func(t *testing.T) {
			var opts []pgstore.Option
			policy := core.RefuseInDoubt
			if c.withTx {
				opts, policy = append(opts, pgstore.WithTx()), core.RunAgain
			}
			pool, s := paymentsDB(t, opts...)
			ch := startHTTPChild(t, pool.Config().ConnString(), c.withTx)
			l := core.NewLocker(s, core.WithLogger(httpcases.Quiet), core.WithTTL(5*time.Second), core.WithRetry(backoff.Constant(20*time.Millisecond)))
			other := servePay(t, frameworks.NetHTTP, l, payHandler(t, func(*http.Request) {}), policy)
			landed := 0
			for i := range runs {
				key := fmt.Sprintf("pay-%s-%d", c.name, i)
				firstDone := make(chan payResult, 1)
				go func() { firstDone <- pay(t, ch.url, key) }()
				ch.waitInserted(firstDone)
				ch.signal(syscall.SIGSTOP)
				retryDone := make(chan payResult, 1)
				go func() { retryDone <- pay(t, other, key) }()
				time.Sleep(childPause)
				ch.signal(syscall.SIGCONT)
				first, retry := <-firstDone, <-retryDone
				n := payments(t, pool, key)
				t.Logf("%s: stopped instance's client %d %s; retry %d %s; %d rows", key, first.status, first.code, retry.status, retry.code, n)
				if c.withTx {
					if retry.status != http.StatusCreated || n != 1 {
						t.Fatalf("run %d: retry %d %s, %d payments; want a 201 and exactly 1 payment", i, retry.status, retry.body, n)
					}
					continue
				}
				if retry.status != http.StatusConflict || retry.code != "in_doubt" || n > 1 {
					t.Fatalf("run %d: retry %d %s, %d payments; want 409 in_doubt and at most 1 payment", i, retry.status, retry.body, n)
				}
				landed += n
			}
			if !c.withTx {
				t.Logf("the stopped instance's own COMMIT landed in %d runs of %d; no retry paid", landed, runs)
			}
		})
	}
}

// httpChild is a child process of the test binary that serves the payment
// route with Replay (see runHTTPChild).
type httpChild struct {
	t        *testing.T
	cmd      *exec.Cmd
	url      string
	inserted chan struct{}
}

func startHTTPChild(t *testing.T, conn string, withTx bool) *httpChild {
	t.Helper()
	cfg, _ := json.Marshal(onceChild{Conn: conn, WithTx: withTx})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), httpChildEnv+"="+string(cfg))
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
	c := &httpChild{t: t, cmd: cmd, inserted: make(chan struct{}, 1)}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			switch line := sc.Text(); {
			case line == "inserted":
				c.inserted <- struct{}{}
			case strings.HasPrefix(line, "url "):
				urls <- strings.TrimPrefix(line, "url ")
			}
		}
	}()
	t.Cleanup(func() {
		_ = in.Close() // the child exits at the end of its input
		if err := cmd.Wait(); err != nil {
			t.Errorf("the child: %v", err)
		}
	})
	select {
	case c.url = <-urls:
	case <-time.After(20 * time.Second):
		t.Fatal("the child did not start serving")
	}
	return c
}

// waitInserted returns once the child said "inserted"; first is the
// child's response, which comes before only when the handler failed.
func (c *httpChild) waitInserted(first <-chan payResult) {
	select {
	case <-c.inserted:
	case r := <-first:
		c.t.Fatalf("the child answered %d %s before it inserted", r.status, r.body)
	case <-time.After(20 * time.Second):
		c.t.Fatal("the child never inserted")
	}
}

func (c *httpChild) signal(sig syscall.Signal) {
	if err := c.cmd.Process.Signal(sig); err != nil {
		c.t.Fatal(err)
	}
}

// httpChildEnv carries, to a child process of the test binary, how to
// serve: its presence makes the process the child.
const httpChildEnv = "PGSTORE_HTTP_CHILD"

// runHTTPChild is the child's part, when this process is one: it serves
// POST /pay with Replay over the database, says its URL, and for each
// payment says "inserted" between its INSERT and its COMMIT: through
// pgstore.Tx with WithTx, else in a transaction of its own, guarded. It
// exits at the end of its input.
func runHTTPChild() {
	cfg := os.Getenv(httpChildEnv)
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
	quiet := slog.New(slog.DiscardHandler)
	l := core.NewLocker(s, core.WithTTL(childTTL), core.WithLogger(quiet))
	// The stop lands in this gap, between the INSERT and the COMMIT.
	gap := func() { fmt.Println("inserted"); time.Sleep(childTTL / 2) }
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, _ := strconv.Unquote(r.Header.Get(httplock.HeaderIdempotencyKey))
		err := func() error {
			ctx := r.Context()
			if c.WithTx {
				tx, _ := pgstore.Tx(ctx)
				_, err := tx.Exec(ctx, "INSERT INTO payments (job) VALUES ($1)", key)
				gap()
				return err
			}
			lk, _ := core.FromContext(ctx)
			tx, err := pool.Begin(ctx)
			if err != nil {
				return err
			}
			defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
			if err := s.Guard(ctx, tx, lk); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "INSERT INTO payments (job) VALUES ($1)", key); err != nil {
				return err
			}
			gap()
			return tx.Commit(ctx)
		}()
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, "paid")
	})
	app := frameworks.NetHTTP.Handler(nil, []httpcases.Route{{
		Method: "POST", Path: "/pay",
		Lock: httplock.Config{Locker: l, Mode: httplock.Wait, MaxWait: 20 * time.Second, StoreTimeout: 10 * time.Second, Logger: quiet,
			Replay: &httplock.ReplayConfig{InDoubt: core.RefuseInDoubt}},
		Key:     httpcases.KeySource{Kind: httpcases.FromUserAndIdempotencyKey},
		Handler: h,
	}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go func() { _ = http.Serve(ln, app) }()
	fmt.Printf("url http://%s/pay\n", ln.Addr())
	_, _ = bufio.NewReader(os.Stdin).ReadString(0) // until the end of the input
	_ = ln.Close()
	pool.Close()
	os.Exit(0)
}
