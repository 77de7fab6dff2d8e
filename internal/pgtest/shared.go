package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/goleak"
)

var (
	sharedMu  sync.Mutex
	sharedSrv *Server
)

// Shared returns the test binary's shared server, started on first use and
// stopped by Main. Tests must not stop or pause it: those that do take a
// private one (Start).
func Shared(tb testing.TB) *Server {
	tb.Helper()
	s, err := SharedServer()
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// SharedServer is Shared for code that has no test at hand (an Example, a
// benchmark's setup).
func SharedServer() (*Server, error) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedSrv == nil {
		s, err := start()
		if err != nil {
			return nil, err
		}
		sharedSrv = s
	}
	return sharedSrv, nil
}

// Main is the TestMain of a package that uses pgtest: it runs the tests,
// stops the shared server and removes the template, then checks that no
// goroutine leaked (goleak).
func Main(m *testing.M) { goleak.VerifyTestMain(closing{m}) }

type closing struct{ m *testing.M }

func (c closing) Run() int {
	code := c.m.Run()
	sharedMu.Lock()
	if sharedSrv != nil {
		sharedSrv.Close()
		sharedSrv = nil
	}
	sharedMu.Unlock()
	removeTemplate()
	return code
}

// NewDatabase creates an empty database on s for tb and returns its
// connection string; it is dropped at cleanup, its connections cut.
func (s *Server) NewDatabase(tb testing.TB) string {
	tb.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "t_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.ConnString("postgres"))
	if err != nil {
		tb.Fatalf("pgtest: connect: %v", err)
	}
	defer c.Close(ctx)
	// A name of our own making, hex only: an identifier cannot be a
	// parameter.
	if _, err := c.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("pgtest: create database: %v", err)
	}
	tb.Cleanup(func() { s.dropDatabase(name) })
	return s.ConnString(name)
}

// dropDatabase drops name if the server is up; a server that is down
// takes its databases with it at Close.
func (s *Server) dropDatabase(name string) {
	if pid, _ := s.running(); pid == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.ConnString("postgres"))
	if err != nil {
		return
	}
	defer c.Close(ctx)
	_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
}

// Pool opens a pool on a fresh database of s (NewDatabase), closed at
// cleanup; tweak, if any, adjusts its configuration first.
func (s *Server) Pool(tb testing.TB, tweak ...func(*pgxpool.Config)) *pgxpool.Pool {
	tb.Helper()
	return OpenPool(tb, s.NewDatabase(tb), tweak...)
}

// OpenPool opens a pool on connString, closed at cleanup.
func OpenPool(tb testing.TB, connString string, tweak ...func(*pgxpool.Config)) *pgxpool.Pool {
	tb.Helper()
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	for _, f := range tweak {
		f(cfg)
	}
	p, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(p.Close)
	return p
}
