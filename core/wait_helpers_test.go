package core_test

import (
	"context"
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
