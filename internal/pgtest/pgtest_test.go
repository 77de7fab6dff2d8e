package pgtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/reqlock/reqlock/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func now(t *testing.T, s *pgtest.Server, conn string) (time.Time, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p := pgtest.OpenPool(t, conn)
	var at time.Time
	err := p.QueryRow(ctx, "SELECT clock_timestamp()").Scan(&at)
	p.Close()
	return at, err
}

func TestSharedServerHandsOutDatabases(t *testing.T) {
	s := pgtest.Shared(t)
	a, b := s.NewDatabase(t), s.NewDatabase(t)
	if a == b {
		t.Fatalf("two databases share a connection string: %s", a)
	}
	if _, err := now(t, s, a); err != nil {
		t.Fatal(err)
	}
	if pgtest.Shared(t) != s {
		t.Fatal("Shared started a second server")
	}
}

func TestKillAndRestartKeepsData(t *testing.T) {
	s := pgtest.Start(t)
	conn := s.NewDatabase(t)
	ctx := context.Background()
	p := pgtest.OpenPool(t, conn)
	if _, err := p.Exec(ctx, "CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	p.Close()
	addr := s.Addr
	s.Kill()
	if _, err := now(t, s, conn); err == nil {
		t.Fatal("a killed server answered")
	}
	s.Restart(t)
	if s.Addr != addr {
		t.Fatalf("restarted on %s, was %s", s.Addr, addr)
	}
	s.StopImmediate(t)
	s.Restart(t)
	p = pgtest.OpenPool(t, conn)
	var n int
	if err := p.QueryRow(ctx, "SELECT n FROM kept").Scan(&n); err != nil || n != 7 {
		t.Fatalf("after two crashes: %d, %v; want 7", n, err)
	}
}

func TestPauseHangsAndResumeAnswers(t *testing.T) {
	s := pgtest.Start(t)
	p := pgtest.OpenPool(t, s.NewDatabase(t))
	if err := p.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Pause()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	err := p.Ping(ctx)
	cancel()
	if err == nil {
		t.Fatal("a paused server answered")
	}
	s.Resume()
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Ping(ctx); err != nil {
		t.Fatalf("after resume: %v", err)
	}
}
