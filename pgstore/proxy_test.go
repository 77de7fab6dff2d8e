package pgstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/pgstore"
)

// proxied is conn with the server's address replaced by the proxy's.
func proxied(conn, server, proxy string) string { return strings.Replace(conn, server, proxy, 1) }

// holdNext holds the next statement sent through p, and returns a func
// that lets it land, its caller having given up on it, and waits until the
// server has run it. pgx gives up on a statement by cancelling it and
// closing its connection, which it does only once the server has answered
// (or after 15s): the held bytes land while the connection is still open,
// its caller gone.
func holdNext(t testing.TB, p *faultproxy.Proxy, s *pgstore.Store) func() {
	t.Helper()
	h := p.HoldNext(faultproxy.Upstream)
	t.Cleanup(h.Release)
	return func() {
		t.Helper()
		select {
		case <-h.Captured():
		case <-time.After(5 * time.Second):
			t.Fatal("no statement was held")
		}
		h.Release()
		time.Sleep(100 * time.Millisecond)
		// The held statement ran on a backend of its own; a read on
		// another that sees no session running it says it is done.
		waitIdle(t, s)
	}
}

// waitIdle waits until no other session of the database is running a
// statement.
func waitIdle(t testing.TB, s *pgstore.Store) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, err := pgstore.Active(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d statements still running", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
