package pgstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/pgstore"
)

// Keys whose leases lapsed (holders that died) and records past their
// retention are deleted by later releases, a bounded batch at a time,
// without a job of their own; live locks and records stay.
func TestSweepBoundsTheTables(t *testing.T) {
	s, pool := open(t, pgstore.WithSweep(time.Nanosecond, 10))
	ctx := context.Background()
	rows := func(table string) int {
		var n int
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Long enough that nothing lapses while the tables fill (a release
	// sweeps too), however slow the machine.
	const lapse = 2 * time.Second
	for i := range 25 {
		key := fmt.Sprintf("reqlock:{dead-%d}", i)
		if _, err := s.Acquire(ctx, store.Lease{Key: key, Token: "t", TTL: lapse}); err != nil {
			t.Fatal(err)
		}
		rec := fmt.Sprintf("reqlock:{rec-%d}", i)
		if _, err := s.Acquire(ctx, store.Lease{Key: rec, Token: "t", TTL: time.Minute}); err != nil {
			t.Fatal(err)
		}
		if err := s.ReleaseRecording(ctx, rec, "t", []byte("r"), lapse); err != nil {
			t.Fatal(err)
		}
	}
	live := store.Lease{Key: "reqlock:{live}", Token: "t", TTL: time.Minute}
	if _, err := s.Acquire(ctx, live); err != nil {
		t.Fatal(err)
	}
	if err := s.ReleaseRecording(ctx, live.Key, live.Token, []byte("kept"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Acquire(ctx, live); err != nil {
		t.Fatal(err)
	}
	if rows("reqlock_locks") != 26 || rows("reqlock_records") != 26 {
		t.Fatalf("before: %d lock rows, %d records", rows("reqlock_locks"), rows("reqlock_records"))
	}
	time.Sleep(lapse + 100*time.Millisecond)
	for i := range 3 {
		other := store.Lease{Key: fmt.Sprintf("reqlock:{other-%d}", i), Token: "t", TTL: time.Minute}
		if _, err := s.Acquire(ctx, other); err != nil {
			t.Fatal(err)
		}
		if err := s.Release(ctx, other.Key, other.Token); err != nil {
			t.Fatal(err)
		}
		// Each release deletes ten of each at most.
		if got, want := rows("reqlock_locks"), max(26-10*(i+1), 1); got != want {
			t.Fatalf("after release %d: %d lock rows, want %d", i, got, want)
		}
		if got, want := rows("reqlock_records"), max(26-10*(i+1), 1); got != want {
			t.Fatalf("after release %d: %d records, want %d", i, got, want)
		}
	}
	if _, err := s.TTL(ctx, live.Key, live.Token); err != nil {
		t.Fatalf("the live lock was swept: %v", err)
	}
}
