package pgsafety_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reqlock/reqlock/internal/pgtest"
)

// procEnv carries a worker process's configuration: this test binary, run
// again, is the process.
const procEnv = "PGSAFETY_WORKER"

type procConfig struct {
	Conn    string
	Guarded bool
	Until   time.Time
}

func TestMain(m *testing.M) {
	if cfg := os.Getenv(procEnv); cfg != "" {
		os.Exit(procMain(cfg))
	}
	pgtest.Main(m)
}

// procMain runs worker cycles, saying on stdout when it holds the lock
// between its read and its write, and pausing there a moment so that the
// parent can stop it there.
func procMain(cfg string) int {
	var c procConfig
	if err := json.Unmarshal([]byte(cfg), &c); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	pool, err := pgxpool.New(context.Background(), c.Conn)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer pool.Close()
	w := newWorker("proc", pool, c.Guarded)
	w.held = func(fence uint64) {
		fmt.Printf("held %d\n", fence)
		time.Sleep(30 * time.Millisecond)
	}
	w.run("account", c.Until)
	return 0
}
