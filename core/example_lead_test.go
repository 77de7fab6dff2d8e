package core_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// Lead runs fn on one instance at a time: here the first resigns when its
// work is done, and the second, which waited in line, leads in a greater
// term.
func ExampleLocker_Lead() {
	store := memorystore.New() // redisstore.New(client) across instances
	first, second := core.NewLocker(store), core.NewLocker(store)
	ctx := context.Background()

	var firstTerm uint64
	err := first.Lead(ctx, "cache-warmer", func(ctx context.Context) error {
		lk, _ := core.FromContext(ctx)
		firstTerm = lk.Fence() // pass the term with every write
		return nil             // done: resign
	})
	fmt.Println("first:", err)

	ctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	err = second.Lead(ctx, "cache-warmer", func(ctx context.Context) error {
		lk, _ := core.FromContext(ctx)
		fmt.Println("second leads in a greater term:", lk.Fence() > firstTerm)
		<-ctx.Done() // lead until the term is lost or ctx ends
		return nil
	})
	fmt.Println("second:", errors.Is(err, context.DeadlineExceeded))
	// Output:
	// first: <nil>
	// second leads in a greater term: true
	// second: true
}

// An Elector answers "do I lead now?" for code that asks before each piece
// of work, such as a scheduler (a *core.Elector is a gocron v2 Elector).
func ExampleElector() {
	locker := core.NewLocker(memorystore.New(), core.WithHolder("instance-1"))
	elector := locker.Elector("scheduler")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- elector.Run(ctx) }()

	for elector.IsLeader(ctx) != nil {
		time.Sleep(time.Millisecond)
	}
	h, _ := elector.Leader(ctx)
	fmt.Println("leader:", h.Holder, "term above 0:", elector.Term() > 0)

	cancel() // resigns
	fmt.Println(errors.Is(<-done, context.Canceled), errors.Is(elector.IsLeader(ctx), core.ErrNotLeader))
	// Output:
	// leader: instance-1 term above 0: true
	// true true
}
