package gocronlock

import (
	"context"
	"fmt"
	"time"

	"github.com/go-co-op/gocron/v2"

	"github.com/reqlock/reqlock/core"
)

// A *core.Elector is a gocron Elector as it stands.
var _ gocron.Elector = (*core.Elector)(nil)

// Option configures NewLocker and CronLock.
type Option func(*config)

type config struct {
	hold time.Duration
}

// HoldAtLeast keeps each run's lock for at least d after the run started,
// even when the job returns sooner, so that instances whose timers fire up
// to d later than the first find the lock taken and skip the tick. Take d
// a little below the job's interval, and above the spread of the
// instances' timers. Unlock waits out the rest of d (less if its context
// ends first); the lock is renewed meanwhile, and freed by its lease if
// the instance dies. It panics for a negative d.
func HoldAtLeast(d time.Duration) Option {
	if d < 0 {
		panic(fmt.Sprintf("gocronlock: HoldAtLeast: negative duration %v", d))
	}
	return func(c *config) { c.hold = d }
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		o(&c)
	}
	return c
}

// NewLocker returns a gocron Locker on l, for gocron.WithDistributedLocker
// or gocron.WithDistributedJobLocker. Each run takes the lock on the job's
// name with one attempt (TryObtain): when another instance holds it, this
// instance skips the run. The lock is renewed while the job runs, and its
// Fence is the run's fencing token. It panics for a nil l.
func NewLocker(l *core.Locker, opts ...Option) gocron.Locker {
	if l == nil {
		panic("gocronlock: NewLocker: nil *core.Locker")
	}
	return &locker{l: l, cfg: newConfig(opts)}
}

type locker struct {
	l   *core.Locker
	cfg config
}

// Lock takes the lock on key, the job's name, for one run.
func (k *locker) Lock(ctx context.Context, key string) (gocron.Lock, error) {
	lk, err := k.l.TryObtain(ctx, key)
	if err != nil {
		return nil, err
	}
	return &lock{lk: lk, start: time.Now(), hold: k.cfg.hold}, nil
}

// lock is one run's lock.
type lock struct {
	lk    *core.Lock
	start time.Time
	hold  time.Duration
}

// Unlock releases the lock, once HoldAtLeast's time since the run started
// has passed or ctx ended. ErrNotHeld says the lock was lost during the
// run.
func (u *lock) Unlock(ctx context.Context) error {
	if rest := u.hold - time.Since(u.start); rest > 0 {
		t := time.NewTimer(rest)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	return u.lk.ReleaseDetached(ctx)
}
