package pgstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

// listeners counts the database's sessions that listen, as their last
// statement says.
func listeners(t *testing.T, pool *pgxpool.Pool) int {
	t.Helper()
	var n int
	err := pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN %'`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func awaitListeners(t *testing.T, pool *pgxpool.Pool, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for listeners(t, pool) != want {
		if time.Now().After(deadline) {
			t.Fatalf("%d listening sessions, want %d", listeners(t, pool), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// One Locker listens on one connection of its own, however many keys it
// waits for; a lost connection wakes every waiter, is opened again by
// itself, and wakes every waiter once more; releases wake waiters again.
func TestListenerRecovers(t *testing.T) {
	s, pool := open(t)
	ctx := context.Background()
	woken := make(chan [2]string, 16)
	sub := s.Subscribe("reqlock:", "inst", func(key, waiter string) { woken <- [2]string{key, waiter} })
	done, err := sub.Hold(ctx)
	if err != nil {
		t.Fatal(err)
	}
	done2, err := sub.Hold(ctx)
	if err != nil {
		t.Fatal(err)
	}
	awaitListeners(t, pool, 1)
	if _, err := pool.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN %'`); err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // lost, then listening again
		select {
		case w := <-woken:
			if w != [2]string{store.WakeAll, store.WakeAll} {
				t.Fatalf("wake-up %d after the lost connection: %v, want every waiter", i, w)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no wake-up %d for every waiter after the connection was lost", i)
		}
	}
	awaitListeners(t, pool, 1)
	done()
	done2()
	awaitListeners(t, pool, 0) // closed a moment after the last holder let go
}

// Through Lockers: after its connection was lost and came back, a release
// still wakes a waiter whose backoff alone would keep it asleep a minute.
func TestWaiterWokenAfterReconnect(t *testing.T) {
	s, pool := open(t)
	ctx := context.Background()
	holder := core.NewLocker(s, core.WithTTL(time.Minute))
	lk, err := holder.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	waiter := core.NewLocker(s, core.WithTTL(time.Minute), core.WithRetry(backoff.Constant(time.Minute)))
	got := make(chan error, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		lk, err := waiter.Obtain(wctx, "k")
		if err == nil {
			err = lk.Release(ctx)
		}
		got <- err
	}()
	awaitListeners(t, pool, 1)
	if _, err := pool.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN %'`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	awaitListeners(t, pool, 1)
	time.Sleep(100 * time.Millisecond) // the woken waiter found the key taken, and sleeps again
	if err := lk.Release(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter was not woken by the release after its connection came back")
	}
}

// A key too long for a notification still wakes its waiter: by name, for
// whatever key it waits for.
func TestLongKeyWakesItsWaiter(t *testing.T) {
	s, _ := open(t)
	ctx := context.Background()
	woken := make(chan [2]string, 4)
	sub := s.Subscribe("reqlock:", "inst", func(key, waiter string) { woken <- [2]string{key, waiter} })
	done, err := sub.Hold(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	key := "reqlock:{" + strings.Repeat("k", 9000) + "}"
	holder := store.Lease{Key: key, Token: "h", TTL: time.Minute}
	if _, err := s.Acquire(ctx, holder); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.AcquireQueued(ctx, store.Lease{Key: key, Token: "~inst/w", TTL: time.Minute}, "inst/w", false); err == nil {
		t.Fatal("the waiter took a held key")
	}
	if err := s.Release(ctx, key, "h"); err != nil {
		t.Fatal(err)
	}
	select {
	case w := <-woken:
		if w != [2]string{store.WakeAll, "inst/w"} {
			t.Fatalf("woken %v, want the waiter by name for any key", w)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter of a long key was not woken")
	}
}
