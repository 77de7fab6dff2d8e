package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
)

// obtained is what an Obtain returned, and when.
type obtained struct {
	lk  *core.Lock
	err error
	at  time.Time
}

// obtainAsync runs l.Obtain(ctx, key) on a goroutine of its own.
func obtainAsync(ctx context.Context, l *core.Locker, key string) chan obtained {
	ch := make(chan obtained, 1)
	go func() {
		lk, err := l.Obtain(ctx, key)
		ch <- obtained{lk, err, time.Now()}
	}()
	return ch
}

// waitFor polls cond for up to 3s: what it waits for happens in the
// background, in well under that, or fails the test.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
