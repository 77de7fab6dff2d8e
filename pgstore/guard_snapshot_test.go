package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reqlock/reqlock/core"
)

// Guard in a REPEATABLE READ or SERIALIZABLE transaction whose snapshot
// is older than the release of the lock, and than the next holder's
// acquire (a hand-off: both only update the row, they change no key).
// FOR KEY SHARE alone does not conflict with such an update, and would
// lock and return the row the snapshot shows (the old token, a lease
// still running): Guard must say the lock is no longer held, and the
// caller's write must not commit under the next holder's lock.
func TestGuardSnapshotOlderThanHandOff(t *testing.T) {
	for name, iso := range map[string]pgx.TxIsoLevel{
		"repeatable read": pgx.RepeatableRead,
		"serializable":    pgx.Serializable,
	} {
		t.Run(name, func(t *testing.T) { guardSnapshotOlderThanHandOff(t, iso) })
	}
}

func guardSnapshotOlderThanHandOff(t *testing.T, iso pgx.TxIsoLevel) {
	s, pool := open(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := pool.Exec(ctx, "CREATE TABLE ledger (n int)"); err != nil {
		t.Fatal(err)
	}
	l := core.NewLocker(s, core.WithTTL(10*time.Second))
	first, err := l.TryObtain(ctx, "acct")
	if err != nil {
		t.Fatal(err)
	}

	// The next holder waits in line on another Locker.
	type taken struct {
		lk  *core.Lock
		err error
	}
	next := make(chan taken, 1)
	go func() {
		other := core.NewLocker(s, core.WithTTL(10*time.Second))
		lk, err := other.Obtain(ctx, "acct")
		next <- taken{lk, err}
	}()
	waitForLine(ctx, t, s, first.StoreKey())

	// The stale holder's transaction takes its snapshot while it still
	// holds the lock.
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: iso})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(ctx, "SELECT count(*) FROM ledger"); err != nil {
		t.Fatal(err)
	}

	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	got := <-next
	if got.err != nil {
		t.Fatalf("the waiter's Obtain: %v", got.err)
	}
	defer func() { _ = got.lk.Release(context.Background()) }()

	gerr := s.Guard(ctx, tx, first)
	if gerr == nil {
		// Show what follows: the stale write commits while the next
		// holder holds the key.
		if _, err := tx.Exec(ctx, "INSERT INTO ledger VALUES (1)"); err != nil {
			t.Fatal(err)
		}
		cerr := tx.Commit(ctx)
		t.Fatalf("Guard of a released lock (next holder fence %d holds the key) = nil, want ErrNotHeld; "+
			"the stale write's commit: %v", got.lk.Fence(), cerr)
	}
	// A serialization failure keeps the write out too, but the contract
	// is ErrNotHeld: a caller that retries serialization failures would
	// retry a transaction that can never pass.
	if !errors.Is(gerr, core.ErrNotHeld) {
		t.Fatalf("Guard of a released lock: %v; want ErrNotHeld", gerr)
	}
}

// waitForLine waits until key has a waiter in line.
func waitForLine(ctx context.Context, t *testing.T, s interface {
	Inspect(context.Context, string) (core.Holding, error)
}, key string) {
	t.Helper()
	for {
		h, err := s.Inspect(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if h.Waiting > 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatal("no waiter joined the line")
		case <-time.After(5 * time.Millisecond):
		}
	}
}
