package storetest

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

// fixture is one test's store and the means to use it.
type fixture struct {
	t   *testing.T
	h   Harness
	s   core.Store
	ctx context.Context // ends at the test's end, or when patience runs out
}

func open(t *testing.T, h Harness) *fixture {
	t.Helper()
	s := h.New(t)
	if s == nil {
		t.Fatal("storetest: Harness.New returned nil")
	}
	return &fixture{t: t, h: h, s: s, ctx: testContext(t, h)}
}

func testContext(t *testing.T, h Harness) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*h.patience())
	t.Cleanup(cancel)
	return ctx
}

// random is a fresh random word: tokens, tags and waiter ids, unique
// across tests sharing a store. Base32, so it holds no '.', '/' or '~'.
func random() string { return rand.Text()[:20] }

// key is a store key no other test uses, ending in its {hash tag} as a
// Locker's keys do.
func (f *fixture) key() string { return f.h.prefix() + "{" + random() + "}" }

// lease is a lease of key under a new token.
func (f *fixture) lease(key string, ttl time.Duration) store.Lease {
	return store.Lease{Key: key, Token: random(), TTL: ttl}
}

// acquire takes l, or fails the test.
func (f *fixture) acquire(l store.Lease) store.Grant {
	f.t.Helper()
	g, err := f.s.Acquire(f.ctx, l)
	if err != nil {
		f.t.Fatalf("Acquire of a free key %s: %v", l.Key, err)
	}
	return g
}

// release releases l, or fails the test.
func (f *fixture) release(l store.Lease) {
	f.t.Helper()
	if err := f.s.Release(f.ctx, l.Key, l.Token); err != nil {
		f.t.Fatalf("Release of the holder's lock %s: %v", l.Key, err)
	}
}

// mustBeTaken checks that a fresh token cannot take key: someone holds it.
func (f *fixture) mustBeTaken(key, why string) {
	f.t.Helper()
	l := f.lease(key, f.h.short())
	g, err := f.s.Acquire(f.ctx, l)
	if err == nil {
		_ = f.s.Release(f.ctx, l.Key, l.Token)
		f.t.Fatalf("%s: another token took the key (fence %d); it must be held", why, g.Fence)
	}
	if !errors.Is(err, core.ErrNotObtained) {
		f.t.Fatalf("%s: another token's Acquire: %v, want ErrNotObtained", why, err)
	}
}

// mustBeFree checks that a fresh token takes key at once, and gives it back.
func (f *fixture) mustBeFree(key, why string) {
	f.t.Helper()
	l := f.lease(key, f.h.short())
	if _, err := f.s.Acquire(f.ctx, l); err != nil {
		f.t.Fatalf("%s: the key must be free, but Acquire says %v", why, err)
	}
	_ = f.s.Release(f.ctx, l.Key, l.Token)
}

// awaitFree waits, up to patience, until a fresh token takes key, and
// returns when it did; the lock it took is released.
func (f *fixture) awaitFree(key, what string) time.Time {
	f.t.Helper()
	deadline := time.Now().Add(f.h.patience())
	for {
		l := f.lease(key, f.h.short())
		_, err := f.s.Acquire(f.ctx, l)
		if err == nil {
			at := time.Now()
			_ = f.s.Release(f.ctx, l.Key, l.Token)
			return at
		}
		if !errors.Is(err, core.ErrNotObtained) {
			f.t.Fatalf("waiting for %s: Acquire: %v", what, err)
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("%s: the key is still taken after %v", what, f.h.patience())
		}
		time.Sleep(f.h.short() / 10)
	}
}

// waitFor polls cond until it holds, up to patience: what it waits for
// must happen, and this only fails a hang.
func (f *fixture) waitFor(what string, cond func() bool) {
	f.t.Helper()
	deadline := time.Now().Add(f.h.patience())
	for !cond() {
		if time.Now().After(deadline) {
			f.t.Fatalf("timed out after %v waiting for %s", f.h.patience(), what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// locker is a Locker over the fixture's store (or s, when given), with
// keys under a prefix of this test's own.
func (f *fixture) locker(opts ...core.Option) *core.Locker {
	return f.lockerOn(f.s, opts...)
}

func (f *fixture) lockerOn(s core.Store, opts ...core.Option) *core.Locker {
	base := []core.Option{core.WithLogger(quiet), core.WithPrefix(f.h.prefix())}
	return core.NewLocker(s, append(base, opts...)...)
}

// as returns the fixture's store as I, or skips the test saying the store
// does not implement it, and why that matters.
func as[I any](f *fixture, name, meaning string) I {
	f.t.Helper()
	i, ok := f.s.(I)
	if !ok {
		f.t.Skipf("the store does not implement %s (%s)", name, meaning)
	}
	return i
}
