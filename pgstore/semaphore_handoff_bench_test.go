package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/benchratio"
	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/pgstore"
)

// BenchmarkPermitHandOff is a permit (limit 1) passed between two
// instances (two stores, each its own pool) beside a lock passed so, in one
// interleaved run: each side takes the key again as soon as it gave it
// back, and stands in line before the other releases, so one iteration is
// one hand-off, from a release to the waiter of the other instance holding.
// The waiters' retry policy waits a minute: only a wake-up serves them. No
// bar: reported, as permit/lock.
func BenchmarkPermitHandOff(b *testing.B) {
	srv := pgtest.Shared(b)
	conn := srv.NewDatabase(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sides [2]*queuedSignal
	for i := range sides {
		sides[i] = &queuedSignal{Store: pgstore.New(pgtest.OpenPool(b, conn)), lock: make(chan struct{}, 1), permit: make(chan struct{}, 1)}
	}
	if err := sides[0].Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	var locks, permits [2]func(context.Context) (*core.Lock, error)
	for i, s := range sides {
		l := core.NewLocker(s, core.WithLogger(quiet), core.WithRetry(backoff.Constant(time.Minute)))
		sem := l.Semaphore(1)
		locks[i] = func(ctx context.Context) (*core.Lock, error) { return l.Obtain(ctx, "lock") }
		permits[i] = func(ctx context.Context) (*core.Lock, error) { return sem.Obtain(ctx, "permit") }
	}
	lock := startHandOff(ctx, b, locks, [2]chan struct{}{sides[0].lock, sides[1].lock})
	permit := startHandOff(ctx, b, permits, [2]chan struct{}{sides[0].permit, sides[1].permit})
	b.ReportAllocs()
	benchratio.Ratios(b, benchratio.Cycle{Name: "lock", Run: lock.next}, benchratio.Cycle{Name: "permit", Run: permit.next})
	b.ReportMetric(float64(lock.barged)/float64(b.N), "lock-retaken/op")
	b.ReportMetric(float64(permit.barged)/float64(b.N), "permit-retaken/op")
	cancel()
	lock.stop()
	permit.stop()
}

// queuedSignal is a store that says when an attempt of a waiter in line was
// refused (the waiter stands in line), on lock or permit.
type queuedSignal struct {
	*pgstore.Store
	lock, permit chan struct{}
}

func refused(err error, queued chan struct{}) {
	if errors.Is(err, core.ErrNotObtained) {
		select {
		case queued <- struct{}{}:
		default:
		}
	}
}

func (s *queuedSignal) AcquireQueued(ctx context.Context, l store.Lease, waiter string, withRecord bool) (store.Grant, []byte, error) {
	g, rec, err := s.Store.AcquireQueued(ctx, l, waiter, withRecord)
	refused(err, s.lock)
	return g, rec, err
}

func (s *queuedSignal) AcquirePermitQueued(ctx context.Context, l store.Lease, limit int, waiter string) (store.Grant, error) {
	g, err := s.Store.AcquirePermitQueued(ctx, l, limit, waiter)
	refused(err, s.permit)
	return g, err
}

// handOff is a key passed back and forth between two sides.
type handOff struct {
	b       *testing.B
	got     chan int
	release [2]chan struct{}
	queued  [2]chan struct{}
	holder  int
	barged  int // hand-offs the old holder took again
	done    chan struct{}
}

// startHandOff starts both sides: side 0 holds the key, side 1 stands in
// line.
func startHandOff(ctx context.Context, b *testing.B, obtain [2]func(context.Context) (*core.Lock, error), queued [2]chan struct{}) *handOff {
	h := &handOff{b: b, got: make(chan int), done: make(chan struct{})}
	left := make(chan struct{}, 2)
	for i := range obtain {
		h.release[i], h.queued[i] = make(chan struct{}), queued[i]
		go func() {
			defer func() { left <- struct{}{} }()
			if i == 1 {
				<-h.done // side 0 first
			}
			for {
				lk, err := obtain[i](ctx)
				if err != nil {
					return
				}
				select {
				case h.got <- i:
				case <-ctx.Done():
				}
				select {
				case <-h.release[i]:
				case <-ctx.Done():
				}
				_ = lk.Release(context.WithoutCancel(ctx))
				if ctx.Err() != nil {
					return
				}
			}
		}()
	}
	h.holder = <-h.got
	close(h.done)
	<-h.queued[1]
	h.done = make(chan struct{})
	go func() { <-left; <-left; close(h.done) }()
	return h
}

// next is one hand-off: the holder releases, the other side holds, and the
// old holder stands in line again. A holder that takes the key again
// ahead of the other side (it found nobody in line) is counted, and
// released again.
func (h *handOff) next() {
	for {
		h.release[h.holder] <- struct{}{}
		if <-h.got != h.holder {
			break
		}
		h.barged++
	}
	<-h.queued[h.holder]
	h.holder = 1 - h.holder
}

func (h *handOff) stop() { <-h.done }
