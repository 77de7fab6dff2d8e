// Package gocronlock runs scheduled jobs on one instance of a service at a
// time, with reqlock's lock: for gocron v2 (github.com/go-co-op/gocron/v2)
// and robfig/cron v3 (github.com/robfig/cron/v3).
//
// There are two ways, and gocron takes either:
//
//   - An Elector: only the leader runs jobs. A *core.Elector is a gocron
//     Elector as it stands: pass it to gocron.WithDistributedElector and
//     run it (Elector.Run) beside the scheduler. Followers skip every run;
//     when the leader stops or dies, another instance leads within a lease
//     and runs the next tick. This is the one to use when every instance
//     runs the same jobs.
//   - A Locker (NewLocker): each run takes a lock named after the job, so
//     the instances share the work of many jobs. Instances' timers fire at
//     different moments, so a run that ends quickly would free the lock
//     before a late instance's timer fires, and the job would run twice in
//     one tick: HoldAtLeast keeps each run's lock for a minimum time after
//     it starts, as ShedLock's lockAtLeastFor does.
//
// For robfig/cron v3, CronLock and CronLeaderOnly are cron.JobWrappers
// doing the same.
//
// This is a module of its own, so that a service that only uses reqlock's
// HTTP middleware does not pull in a scheduler.
package gocronlock
