package pgstore_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/pgstore"
)

// A permit waiter's attempt whose bytes are held on the way while its
// caller gives up (the Locker cancels the attempt and leaves the line)
// lands late, with the key full: it neither takes a permit nor stands in
// line, so the next release admits the live waiter behind at once, woken,
// rather than a ghost that would keep its place for PermitLineKeep while
// nobody wakes the waiter behind it.
func TestLatePermitLineJoinTakesNothing(t *testing.T) {
	srv := pgtest.Shared(t)
	conn := srv.NewDatabase(t)
	direct := pgstore.New(pgtest.OpenPool(t, conn))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := direct.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	p := faultproxy.Start(t, srv.Addr)
	via := pgstore.New(pgtest.OpenPool(t, proxied(conn, srv.Addr, p.Addr()), oneConn))
	noPoll := core.WithRetry(backoff.Constant(time.Minute))
	holders := core.NewLocker(direct, core.WithLogger(quiet), core.WithTTL(10*time.Second)).Semaphore(1)
	waiter := core.NewLocker(via, core.WithLogger(quiet), core.WithTTL(10*time.Second), noPoll)
	sem := waiter.Semaphore(1)
	skey, _ := waiter.StoreKey("k")
	pool := pgtest.OpenPool(t, conn)
	count := func(sql string) int {
		var n int
		if err := pool.QueryRow(ctx, sql, skey).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	inLine := func(key string) func() bool {
		return func() bool {
			var n int
			_ = pool.QueryRow(ctx, `SELECT count(*) FROM reqlock_permit_waiters WHERE key = $1`, key).Scan(&n)
			return n > 0
		}
	}

	// Another wait of the same Semaphore holds its subscription (its
	// LISTEN connection) open throughout: the next bytes sent through the
	// proxy are the held attempt, not a new connection's start-up.
	kept, err := holders.TryObtain(ctx, "keep")
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Release(ctx)
	keepCtx, stopKeeping := context.WithCancel(ctx)
	keeping := make(chan struct{})
	go func() {
		defer close(keeping)
		if lk, err := sem.Obtain(keepCtx, "keep"); err == nil {
			_ = lk.Release(ctx)
		}
	}()
	defer func() { stopKeeping(); <-keeping }()
	keepKey, _ := waiter.StoreKey("keep")
	waitFor(t, "the keeping wait to stand in line", inLine(keepKey))

	held, err := holders.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	// The caller found the key full, and waits in line from its next
	// attempt on; the keeping wait asks now and then: hold the first
	// statement for this key, letting the others through.
	_, err = sem.TryObtain(ctx, "k")
	if !errors.Is(err, core.ErrNotObtained) {
		t.Fatalf("TryObtain of a full key: %v, want ErrNotObtained", err)
	}
	land := holdFor(t, p, direct, []byte(skey))
	short, giveUp := context.WithTimeout(ctx, 200*time.Millisecond)
	if lk, err := sem.ObtainAfter(short, "k", err); err == nil {
		_ = lk.Release(ctx)
		t.Fatal("obtained a permit of a full key")
	}
	giveUp()
	// The Locker's clean-up: the attempt's cancel and the waiter's leave
	// each leave a marker.
	waitFor(t, "the cancel and the leave of the given-up wait", func() bool {
		return count(`SELECT count(*) FROM reqlock_permit_cancels WHERE key = $1`) >= 2
	})
	land()
	if n := count(`SELECT count(*) FROM reqlock_permit_waiters WHERE key = $1`); n != 0 {
		t.Fatalf("the late attempt stands in line: %d waiters of the key, want none", n)
	}
	if n := count(`SELECT count(*) FROM reqlock_permits WHERE key = $1`); n != 1 {
		t.Fatalf("%d permits of the key after the late attempt landed, want the holder's alone", n)
	}

	// A live waiter, which polls not, is admitted by the release alone.
	got := make(chan error, 1)
	live := core.NewLocker(direct, core.WithLogger(quiet), core.WithTTL(10*time.Second), noPoll).Semaphore(1)
	go func() {
		lk, err := live.Obtain(ctx, "k")
		if err == nil {
			_ = lk.Release(ctx)
		}
		got <- err
	}()
	waitFor(t, "the live waiter to stand in line", inLine(skey))
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("the live waiter: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the live waiter was not admitted by the release: something stands in line ahead of it")
	}
}

// holdFor holds the first chunk sent upstream through p that carries
// mark, letting every chunk before it through, and returns a func that
// lets it land and waits until the server has run it, as holdNext does.
func holdFor(t *testing.T, p *faultproxy.Proxy, s *pgstore.Store, mark []byte) func() {
	t.Helper()
	var held *faultproxy.Held
	found := make(chan struct{})
	h := p.HoldNext(faultproxy.Upstream)
	go func() {
		defer close(found)
		for {
			select {
			case <-h.Captured():
			case <-time.After(10 * time.Second):
				h.Release()
				return
			}
			if bytes.Contains(h.Bytes(), mark) {
				held = h
				return
			}
			next := p.HoldNext(faultproxy.Upstream)
			h.Release()
			h = next
		}
	}()
	t.Cleanup(func() {
		<-found
		if held != nil {
			held.Release()
		}
	})
	return func() {
		t.Helper()
		<-found
		if held == nil {
			t.Fatal("no statement for the key was held")
		}
		held.Release()
		time.Sleep(100 * time.Millisecond)
		waitIdle(t, s)
	}
}

// waitFor polls cond until it holds, for up to 20s: what it waits for
// must happen, and this only fails a hang.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
