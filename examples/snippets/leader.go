package snippets

import (
	"context"
	"time"

	"github.com/reqlock/reqlock/core"
)

// Leader is docs/leader.md's Lead section: the cache warmer runs on one
// instance at a time, and every write carries the term.
func Leader(ctx context.Context, locker *core.Locker, acct *Account) error {
	return locker.Lead(ctx, "cache-warmer", func(ctx context.Context) error {
		lk, _ := core.FromContext(ctx)
		term := lk.Fence() // strictly greater than every earlier leader's
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done(): // the term was lost, or ctx ended
				return nil
			case <-tick.C:
				if err := acct.Apply(term, 1); err != nil {
					return err // a newer leader wrote: this term is over
				}
			}
		}
	})
}

// Consume is docs/leader.md's Elector section: a consumer that only takes
// work while its instance leads, and hands the term to the resource.
func Consume(ctx context.Context, locker *core.Locker, acct *Account, jobs <-chan int64) error {
	elector := locker.Elector("consumer")
	go elector.Run(ctx) // campaigns until ctx ends, again after every lost term

	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case amount := <-jobs:
			if elector.IsLeader(ctx) != nil {
				continue // a follower: the leader takes this one
			}
			_ = acct.Apply(elector.Term(), amount)
		}
	}
}

// AsynqScheduler is what docs/leader.md's asynq section uses of
// *asynq.Scheduler: its scheduler enqueues its periodic tasks from every
// instance that runs it, so only the leader may.
type AsynqScheduler interface {
	Start() error
	Shutdown()
}

// AsynqOnLeader is docs/leader.md's asynq section: newScheduler builds the
// scheduler and registers its tasks (asynq.NewScheduler, Register).
func AsynqOnLeader(ctx context.Context, locker *core.Locker, newScheduler func() AsynqScheduler) error {
	return locker.Lead(ctx, "asynq-scheduler", func(ctx context.Context) error {
		scheduler := newScheduler() // a fresh one per term
		if err := scheduler.Start(); err != nil {
			return err
		}
		<-ctx.Done() // this instance leads until the term is lost or ctx ends
		scheduler.Shutdown()
		return nil
	})
}
