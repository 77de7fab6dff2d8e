package core

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"testing"
	"time"
	"weak"
)

// quietLogger keeps a Locker's log out of the test output.
func quietLogger() Option { return WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))) }

// lapsingHolder is a Locker on st, without watchdog, holding "k" on a
// lease of ttl while its own timer is pushed an hour out, as a stalled
// process would have it: only the store can tell it that the lease ran out.
// The lock is released at cleanup, which stops its watching.
func lapsingHolder(t *testing.T, st Store, ttl time.Duration) (*Locker, *Lock) {
	t.Helper()
	holder := NewLocker(st, WithTTL(ttl), WithoutWatchdog(), quietLogger())
	lk, err := holder.TryObtain(context.Background(), "k")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lk.Release(context.Background()) })
	holder.dog.mu.Lock()
	lk.validUntil = time.Now().Add(time.Hour)
	holder.dog.mu.Unlock()
	return holder, lk
}

// attempted is what a TryObtain returned.
type attempted struct {
	lk  *Lock
	err error
}

// tryAsync runs l.TryObtain(key) on a goroutine of its own.
func tryAsync(l *Locker, key string) <-chan attempted {
	got := make(chan attempted, 1)
	go func() {
		lk, err := l.TryObtain(context.Background(), key)
		got <- attempted{lk, err}
	}()
	return got
}

// mustBeLost fails unless lk's Lost is closed.
func mustBeLost(t *testing.T, lk *Lock, what string) {
	t.Helper()
	select {
	case <-lk.Lost():
	default:
		t.Fatal(what)
	}
}

// collected reports whether the value p points to is garbage collected
// within a second.
func collected[T any](p weak.Pointer[T]) bool {
	for range 100 {
		runtime.GC()
		if p.Value() == nil {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// minSweep is the map size at which the memory store starts sweeping
// lapsed entries (memorystore's threshold): the tests fill the store past
// it to make a sweep run.
const minSweep = 1024
