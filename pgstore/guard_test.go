package pgstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reqlock/reqlock/core"
)

// Guard in a transaction keeps the key from any other holder until the
// transaction ends, even past the holder's lease: the takeover waits for
// the commit. The holder's own renewal is not held up meanwhile.
func TestGuardHoldsOffTakeoverUntilCommit(t *testing.T) {
	s, pool := open(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, "CREATE TABLE ledger (n int)"); err != nil {
		t.Fatal(err)
	}
	ttl := 300 * time.Millisecond
	holder := core.NewLocker(s, core.WithTTL(ttl), core.WithoutWatchdog())
	lk, err := holder.TryObtain(ctx, "acct")
	if err != nil {
		t.Fatal(err)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if err := s.Guard(ctx, tx, lk); err != nil {
		t.Fatalf("Guard of a held lock: %v", err)
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	if err := lk.Refresh(rctx, ttl); err != nil {
		t.Fatalf("the holder's renewal under its own guard: %v", err)
	}
	cancel()
	if _, err := tx.Exec(ctx, "INSERT INTO ledger VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * ttl) // the lease runs out: a pause past it

	type taken struct {
		lk  *core.Lock
		err error
	}
	next := make(chan taken, 1)
	go func() {
		l := core.NewLocker(s, core.WithTTL(5*time.Second))
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		lk, err := l.Obtain(actx, "acct")
		next <- taken{lk, err}
	}()
	select {
	case got := <-next:
		t.Fatalf("the key was taken (%v, %v) while the guarded transaction was open", got.lk, got.err)
	case <-time.After(500 * time.Millisecond):
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("commit of the guarded write: %v", err)
	}
	got := <-next
	if got.err != nil {
		t.Fatalf("takeover after the commit: %v", got.err)
	}
	if got.lk.Fence() <= lk.Fence() {
		t.Fatalf("fence %d after %d", got.lk.Fence(), lk.Fence())
	}
	// Too late now: the old holder is refused.
	tx2, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx2.Rollback(ctx) }()
	if err := s.Guard(ctx, tx2, lk); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("Guard of a lock taken over: %v, want ErrNotHeld", err)
	}
	_ = got.lk.Release(ctx)
}

// A lock whose lease ran out, or that was released, is not held, taken
// over or not.
func TestGuardRefusesLapsedAndReleased(t *testing.T) {
	s, pool := open(t)
	ctx := context.Background()
	l := core.NewLocker(s, core.WithTTL(200*time.Millisecond), core.WithoutWatchdog())
	lapsed, err := l.TryObtain(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	released, err := l.TryObtain(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if err := released.Release(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	for name, lk := range map[string]*core.Lock{"lapsed": lapsed, "released": released, "nil": nil} {
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Guard(ctx, tx, lk); !errors.Is(err, core.ErrNotHeld) {
			t.Errorf("Guard of a %s lock: %v, want ErrNotHeld", name, err)
		}
		_ = tx.Rollback(ctx)
	}
}

// A Locker with a prefix of its own: Guard finds the lock under the key the
// Lock itself names, with nothing to tell the store.
func TestGuardWithPrefix(t *testing.T) {
	s, pool := open(t)
	ctx := context.Background()
	l := core.NewLocker(s, core.WithPrefix("shop:"))
	lk, err := l.TryObtain(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lk.Release(ctx) }()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if err := s.Guard(ctx, tx, lk); err != nil {
		t.Fatalf("Guard of a lock under another prefix: %v", err)
	}
}

// QueueGuard's check runs in the caller's batch: a lock no longer held
// fails the batch with ErrNotHeld, and the transaction rolls back with the
// write queued after it.
func TestQueueGuard(t *testing.T) {
	s, pool := open(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, "CREATE TABLE acct (n int)"); err != nil {
		t.Fatal(err)
	}
	l := core.NewLocker(s, core.WithTTL(200*time.Millisecond), core.WithoutWatchdog())
	lk, err := l.TryObtain(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	write := func() error {
		tx, err := pool.Begin(ctx)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback(ctx) }()
		var b pgx.Batch
		if err := s.QueueGuard(&b, lk); err != nil {
			return err
		}
		b.Queue("INSERT INTO acct VALUES (1)")
		if err := tx.SendBatch(ctx, &b).Close(); err != nil {
			return err
		}
		return tx.Commit(ctx)
	}
	if err := write(); err != nil {
		t.Fatalf("a batch under a held lock: %v", err)
	}
	time.Sleep(300 * time.Millisecond) // the lease runs out
	if err := write(); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("a batch under a lapsed lock: %v, want ErrNotHeld", err)
	}
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM acct").Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d rows (%v), want only the first write's", n, err)
	}
}

// Records are as durable as the server's writes: the tests' server runs
// with fsync off, and says so.
func TestRecordsDurable(t *testing.T) {
	s, _ := open(t)
	durable, detail, err := s.RecordsDurable(context.Background())
	if err != nil || durable || !strings.Contains(detail, "fsync=off") {
		t.Fatalf("RecordsDurable on a server without fsync: %v, %q, %v", durable, detail, err)
	}
}
