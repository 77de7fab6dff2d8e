package gocronlock_test

import (
	"context"
	"fmt"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/robfig/cron/v3"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/gocronlock"
	"github.com/reqlock/reqlock/memorystore"
)

// Every instance runs the same scheduler; only the leader runs its jobs.
func Example_elector() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	ran := make(chan struct{}, 1)
	report := func() { // the job; here it only says that it ran
		select {
		case ran <- struct{}{}:
		default:
		}
	}

	locker := core.NewLocker(memorystore.New()) // redisstore.New(client) across instances
	elector := locker.Elector("scheduler")
	go elector.Run(ctx) // campaigns until ctx ends, and again after a lost term

	s, _ := gocron.NewScheduler(gocron.WithDistributedElector(elector)) // followers skip every run
	s.NewJob(gocron.DurationJob(10*time.Millisecond), gocron.NewTask(report))
	s.Start()
	defer s.Shutdown()

	<-ran
	fmt.Println("the leader ran the job, in term", elector.Term() > 0)
	// Output: the leader ran the job, in term true
}

// Each run takes a lock named after the job, held at least 50 s, so that
// instances whose timers fire up to 50 s apart still run each minute once.
func ExampleNewLocker() {
	locker := core.NewLocker(memorystore.New()) // redisstore.New(client) across instances

	s, _ := gocron.NewScheduler(gocron.WithDistributedLocker(
		gocronlock.NewLocker(locker, gocronlock.HoldAtLeast(50*time.Second))))
	s.NewJob(gocron.DurationJob(time.Minute), gocron.NewTask(func() { /* the job */ }),
		gocron.WithName("cleanup")) // the lock's key: give every job a name of its own
	s.Start()
	defer s.Shutdown()

	fmt.Println("scheduled")
	// Output: scheduled
}

// robfig/cron v3: the nightly report runs on whichever instance takes its
// lock first, once.
func ExampleCronLock() {
	locker := core.NewLocker(memorystore.New()) // redisstore.New(client) across instances

	c := cron.New(cron.WithChain(
		gocronlock.CronLock(locker, "nightly-report", gocronlock.HoldAtLeast(time.Minute))))
	c.AddFunc("0 3 * * *", func() { /* the report */ })
	c.Start()
	defer c.Stop()

	fmt.Println("scheduled")
	// Output: scheduled
}

// robfig/cron v3 with an Elector: only the leader runs the jobs.
func ExampleCronLeaderOnly() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	locker := core.NewLocker(memorystore.New()) // redisstore.New(client) across instances

	elector := locker.Elector("cron")
	go elector.Run(ctx)
	c := cron.New(cron.WithChain(gocronlock.CronLeaderOnly(elector)))
	c.AddFunc("@every 1m", func() { /* the job */ })
	c.Start()
	defer c.Stop()

	fmt.Println("scheduled")
	// Output: scheduled
}
