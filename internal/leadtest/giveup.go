package leadtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
)

// GiveUpInLine: a Lead whose context ends while its attempt in line is on
// its way must leave the line over the connection it has. The leader L
// and the follower G reach the store directly (direct); the follower F
// through link only (linked). F's next attempt is held on link, F's
// context ends, L resigns (the store hands the key to F, still in line),
// and the held attempt lands: G must lead, and F must have opened no
// connection meanwhile. A client that gives up on a command drops its
// connection; a clean-up that waits for a new one (a fork and a login on
// PostgreSQL) keeps the key handed to F from everyone for that long, up
// to a hand-off and more.
func GiveUpInLine(t *testing.T, direct func() store.Store, linked store.Store, link *faultproxy.Proxy) {
	t.Helper()
	ctx := context.Background()
	key := Key + ":" + t.Name()
	leader := core.NewLocker(direct(), quiet, core.WithHolder("L"))
	// F polls often, so that an attempt of its comes soon to be held.
	f := core.NewLocker(linked, quiet, core.WithHolder("F"), core.WithRetry(backoff.Constant(20*time.Millisecond)))
	g := core.NewLocker(direct(), quiet, core.WithHolder("G"))

	resign, leading := make(chan struct{}), make(chan struct{})
	var done []chan struct{}
	spawn := func(fn func()) {
		c := make(chan struct{})
		done = append(done, c)
		go func() { defer close(c); fn() }()
	}
	defer func() {
		for _, c := range done {
			<-c
		}
	}()
	spawn(func() {
		_ = leader.Lead(ctx, key, func(context.Context) error { close(leading); <-resign; return nil })
	})
	defer func() {
		select {
		case <-resign:
		default:
			close(resign)
		}
	}()
	<-leading
	inLine := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			h, err := leader.Inspect(ctx, key)
			if err == nil && h.Waiting == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %d in line: %+v, %v", n, h, err)
			}
		}
	}

	fctx, fcancel := context.WithCancel(ctx)
	defer fcancel()
	fled := make(chan error, 1)
	spawn(func() {
		fled <- f.Lead(fctx, key, func(context.Context) error { t.Error("F led after it gave up"); return nil })
	})
	inLine(1)
	gctx, gcancel := context.WithCancel(ctx)
	defer gcancel()
	gLeads := make(chan struct{})
	spawn(func() {
		_ = g.Lead(gctx, key, func(context.Context) error { close(gLeads); return nil })
	})
	inLine(2)

	before := link.Accepted()
	held := link.HoldNext(faultproxy.Upstream)
	defer held.Release()
	select {
	case <-held.Captured():
	case <-time.After(10 * time.Second):
		t.Fatal("F sent no attempt to hold")
	}
	fcancel()
	select {
	case err := <-fled:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("F's Lead = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("F's Lead did not return when its context ended")
	}
	close(resign)
	held.Release()
	select {
	case <-gLeads:
	case <-time.After(10 * time.Second):
		t.Fatal("G never led")
	}
	if n := link.Accepted() - before; n != 0 {
		t.Errorf("F opened %d connections to leave the line after it gave up, want 0", n)
	}
}
