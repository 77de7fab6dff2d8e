package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/memorystore"
)

// refusedInLine is the memory store, telling each waiter whose attempt in
// a permit line was refused.
type refusedInLine struct {
	*memorystore.Store
	refused chan string
}

func (s refusedInLine) AcquirePermitQueued(ctx context.Context, l store.Lease, limit int, waiter string) (store.Grant, error) {
	g, err := s.Store.AcquirePermitQueued(ctx, l, limit, waiter)
	if errors.Is(err, core.ErrNotObtained) {
		select {
		case s.refused <- waiter:
		default:
		}
	}
	return g, err
}

// Limits per call, and waiting woken at release: a waiter with limit 2
// stands first in line, one with limit 5 behind it, and five permits are
// held. Two releases leave three: no place for the first waiter, two for
// the second, who must get one then. A release wakes the head of the line
// alone, though, and the head, refused, wakes nobody: the second waiter
// sleeps until its policy (an hour) says to ask again.
func TestSemaphoreLimitsPerCallWokenAtRelease(t *testing.T) {
	s := refusedInLine{Store: memorystore.New(), refused: make(chan string, 16)}
	ctx := ctxT(t, time.Minute)
	five := newLocker(s, core.WithTTL(time.Hour)).Semaphore(5)
	var held []*core.Lock
	for range 5 {
		lk, err := five.TryObtain(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, lk)
	}
	defer func() {
		for _, lk := range held {
			_ = lk.Release(context.Background())
		}
	}()
	patient := func(limit int) *core.Semaphore {
		return newLocker(s, core.WithTTL(time.Hour), core.WithRetry(backoff.Constant(time.Hour))).Semaphore(limit)
	}
	got := make(chan int, 2)
	errs := make(chan error, 2)
	for _, limit := range []int{2, 5} {
		sem := patient(limit)
		go func() {
			lk, err := sem.Obtain(ctx, "k")
			if err != nil {
				errs <- err
				return
			}
			defer lk.Release(context.Background())
			got <- limit
			<-ctx.Done()
		}()
		select { // in line before the next comes
		case <-s.refused:
		case <-time.After(10 * time.Second):
			t.Fatalf("the waiter of limit %d never stood in line", limit)
		}
	}
	for _, lk := range held[:2] {
		if err := lk.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	held = held[2:]
	const patience = 10 * time.Second
	select {
	case limit := <-got:
		if limit != 5 {
			t.Fatalf("the waiter of limit %d got a permit with 3 held", limit)
		}
	case err := <-errs:
		t.Fatalf("Obtain: %v", err)
	case <-time.After(patience):
		t.Fatalf("with 3 of 5 permits held the waiter of limit 5 was not served within %v: the releases woke only the head of the line, whose limit of 2 let it take nothing", patience)
	}
}

// Limits per call: a waiter in line keeps one of the places left for
// itself, whatever its limit (docs/semaphore.md). A waiter of limit 2
// stands in line while four permits are held by callers of limit 5: it
// cannot take the fifth place, and neither can a newcomer of limit 5, since
// the one place left is the waiter's. Once a fifth place is free too, the
// newcomer gets one.
func TestSemaphoreWaiterKeepsAPlaceWhateverItsLimit(t *testing.T) {
	s := refusedInLine{Store: memorystore.New(), refused: make(chan string, 16)}
	ctx := ctxT(t, time.Minute)
	five := newLocker(s, core.WithTTL(time.Hour)).Semaphore(5)
	var held []*core.Lock
	defer func() {
		for _, lk := range held {
			_ = lk.Release(context.Background())
		}
	}()
	for range 4 {
		lk, err := five.TryObtain(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, lk)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if lk, err := newLocker(s, core.WithTTL(time.Hour), core.WithRetry(backoff.Constant(time.Hour))).Semaphore(2).Obtain(wctx, "k"); err == nil {
			_ = lk.Release(context.Background())
		}
	}()
	defer func() { cancel(); <-done }()
	select {
	case <-s.refused:
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter of limit 2 never stood in line")
	}
	if lk, err := five.TryObtain(ctx, "k"); !errors.Is(err, core.ErrNotObtained) {
		if err == nil {
			_ = lk.Release(ctx)
		}
		t.Fatalf("TryObtain of limit 5 with 4 held and a waiter in line: %v, want ErrNotObtained: the place left is the waiter's", err)
	}
	if err := held[0].Release(ctx); err != nil {
		t.Fatal(err)
	}
	held = held[1:]
	lk, err := five.TryObtain(ctx, "k")
	if err != nil {
		t.Fatalf("TryObtain of limit 5 with 3 held and one waiter in line: %v", err)
	}
	held = append(held, lk)
}
