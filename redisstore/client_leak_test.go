package redisstore_test

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
	"github.com/reqlock/reqlock/redisstore/redlock"
)

// A service that makes a client per tenant (or per reconnect), uses a store
// over it and closes it must get the client's memory back once it drops
// every reference: New must not keep clients alive in a table of its own.
func TestClosedClientIsCollected(t *testing.T) {
	srv := redistest.Start(t)

	// The control: a client never given to New is collected. Without it the
	// check below could fail for a reason of go-redis's own.
	plain := use(t, srv.Addr, false)
	// The same, through a store and a Locker.
	stored := use(t, srv.Addr, true)

	deadline := time.Now().Add(5 * time.Second)
	for (plain.Value() != nil || stored.Value() != nil) && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if plain.Value() != nil {
		t.Fatal("a closed client never given to redisstore.New is still alive: the check cannot tell")
	}
	if stored.Value() != nil {
		t.Fatal("a closed client that was given to redisstore.New is never collected: the store package keeps it")
	}
}

// The same for a client made without ContextTimeoutEnabled, which the store
// warns about once per client, under a Redlock store (which adds no dial
// hook): once closed and dropped, it must be collected too.
func TestClosedClientWarnedAboutIsCollected(t *testing.T) {
	srv := redistest.Start(t)
	opts := redistest.ClientOptions(srv.Addr)
	opts.ContextTimeoutEnabled = false

	plain := redis.NewClient(opts)
	_ = plain.Close()
	control := weak.Make(plain)

	c := redis.NewClient(opts)
	l := core.NewLocker(redlock.New(c), core.WithoutWatchdog(), core.WithLogger(quietLog))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	lk, err := l.TryObtain(ctx, "collected")
	if err != nil {
		t.Fatal(err)
	}
	if err := lk.Release(ctx); err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	warned := weak.Make(c)
	plain, c, l, lk = nil, nil, nil, nil

	deadline := time.Now().Add(5 * time.Second)
	for (control.Value() != nil || warned.Value() != nil) && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if control.Value() != nil {
		t.Fatal("a closed client never given to a store is still alive: the check cannot tell")
	}
	if warned.Value() != nil {
		t.Fatal("a closed client the store warned about is never collected: the store package keeps it")
	}
}

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// use opens a client of addr, runs one lock cycle on it (through a store
// when viaStore, else a PING), closes it and returns a weak pointer to it.
func use(t *testing.T, addr string, viaStore bool) weak.Pointer[redis.Client] {
	t.Helper()
	c := redis.NewClient(redistest.ClientOptions(addr))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if viaStore {
		l := core.NewLocker(redisstore.New(c), core.WithoutWatchdog())
		lk, err := l.TryObtain(ctx, "collected")
		if err != nil {
			t.Fatal(err)
		}
		if err := lk.Release(ctx); err != nil {
			t.Fatal(err)
		}
	} else if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	return weak.Make(c)
}
