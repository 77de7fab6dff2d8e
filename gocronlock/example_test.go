package gocronlock_test

import (
	"context"
	"fmt"
	"time"

	"github.com/go-co-op/gocron/v2"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/gocronlock"
	"github.com/reqlock/reqlock/memorystore"
)

// Every instance runs the same scheduler; only the leader runs its jobs.
func Example_elector() {
	locker := core.NewLocker(memorystore.New()) // redisstore.New(client) across instances
	elector := locker.Elector("scheduler")
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go elector.Run(ctx) // campaigns until ctx ends, again after a lost term

	for elector.IsLeader(ctx) != nil { // only so that the example's output is certain
		time.Sleep(time.Millisecond)
	}
	s, _ := gocron.NewScheduler(gocron.WithDistributedElector(elector))
	ran := make(chan struct{})
	s.NewJob(gocron.OneTimeJob(gocron.OneTimeJobStartImmediately()), gocron.NewTask(func() {
		fmt.Println("the leader runs the job, in term", elector.Term() > 0)
		close(ran)
	}))
	s.Start()
	<-ran
	s.Shutdown()
	// Output: the leader runs the job, in term true
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
