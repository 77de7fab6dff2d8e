package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/pgstore"
)

// An acquire of a free key draws its fence and then inserts the key's row;
// the insert may wait between the two, here for a release of the key that
// is still in its transaction. A fence drawn meanwhile may be the key's own
// (another holder came and went while the insert waited): the fence the
// acquire returns is above it, on the statement alone and in the function
// alike.
func TestFenceDrawnAfterTheInsertWaited(t *testing.T) {
	s, pool := open(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	paths := []struct {
		name    string
		acquire func(store.Lease) (store.Grant, error)
	}{
		{"insert", func(l store.Lease) (store.Grant, error) { return s.Acquire(ctx, l) }},
		{"function", func(l store.Lease) (store.Grant, error) {
			g, _, err := s.AcquireOrRecord(ctx, l)
			return g, err
		}},
	}
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			key := "reqlock:{fence-order-" + p.name + "}"
			if _, err := s.Acquire(ctx, store.Lease{Key: key, Token: "before", TTL: time.Minute}); err != nil {
				t.Fatal(err)
			}
			// A release in flight: the row deleted, not yet committed.
			release, err := pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = release.Rollback(context.WithoutCancel(ctx)) }()
			if _, err := release.Exec(ctx, "DELETE FROM reqlock_locks WHERE key = $1", key); err != nil {
				t.Fatal(err)
			}
			type result struct {
				g   store.Grant
				err error
			}
			got := make(chan result, 1)
			go func() {
				g, err := p.acquire(store.Lease{Key: key, Token: "after", TTL: time.Minute})
				got <- result{g, err}
			}()
			waitForLockWait(ctx, t, s)
			var drawn int64
			if err := pool.QueryRow(ctx, "SELECT nextval('reqlock_fence')").Scan(&drawn); err != nil {
				t.Fatal(err)
			}
			if err := release.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			r := <-got
			if r.err != nil {
				t.Fatal(r.err)
			}
			if int64(r.g.Fence) <= drawn {
				t.Fatalf("fence %d, below %d drawn while the insert waited", r.g.Fence, drawn)
			}
		})
	}
}

// waitForLockWait returns once a session of the store's database waits for
// a row lock.
func waitForLockWait(ctx context.Context, t *testing.T, s *pgstore.Store) {
	t.Helper()
	for {
		n, err := pgstore.LockWaits(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatal("no session came to wait for the release")
		case <-time.After(5 * time.Millisecond):
		}
	}
}
