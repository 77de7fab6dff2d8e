package gocronlock

import (
	"context"

	"github.com/robfig/cron/v3"

	"github.com/reqlock/reqlock/core"
)

// CronLock is a robfig/cron v3 JobWrapper that runs a job only on the
// instance that takes the lock on key for the run, with one attempt;
// the others skip the run. Give each job a key of its own. HoldAtLeast
// works as for NewLocker. It panics for a nil l or an empty key.
//
//	c := cron.New(cron.WithChain(gocronlock.CronLock(locker, "nightly-report", gocronlock.HoldAtLeast(time.Minute))))
func CronLock(l *core.Locker, key string, opts ...Option) cron.JobWrapper {
	if l == nil {
		panic("gocronlock: CronLock: nil *core.Locker")
	}
	if key == "" {
		panic("gocronlock: CronLock: empty key")
	}
	k := &locker{l: l, cfg: newConfig(opts)}
	return func(j cron.Job) cron.Job {
		return cron.FuncJob(func() {
			ctx := context.Background()
			lk, err := k.Lock(ctx, key)
			if err != nil {
				return
			}
			defer lk.Unlock(ctx)
			j.Run()
		})
	}
}

// CronLeaderOnly is a robfig/cron v3 JobWrapper that runs a job only while
// e says this instance leads (Elector.IsLeader); run e (Elector.Run) beside
// the cron. It panics for a nil e.
func CronLeaderOnly(e *core.Elector) cron.JobWrapper {
	if e == nil {
		panic("gocronlock: CronLeaderOnly: nil *core.Elector")
	}
	return func(j cron.Job) cron.Job {
		return cron.FuncJob(func() {
			if e.IsLeader(context.Background()) != nil {
				return
			}
			j.Run()
		})
	}
}
