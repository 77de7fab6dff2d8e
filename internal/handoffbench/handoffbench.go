// Package handoffbench passes a lock and a permit (limit 1) between two
// instances of a store, for the stores' hand-off benchmarks: each side
// takes the key again as soon as it gave it back and stands in line before
// the other releases, so one iteration is one hand-off, from a release to
// the waiter of the other instance holding.
//
// The store under test tells when a waiter's attempt was refused (it now
// stands in line) through Queued; a wrapper that embeds the concrete store
// does so, and keeps every optional interface of the store visible.
package handoffbench

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/benchratio"
)

// Queued is told when an attempt of a waiter in line was refused, on the
// lock or on the permit.
type Queued struct{ lock, permit chan struct{} }

// NewQueued returns a Queued that no attempt has told yet.
func NewQueued() *Queued {
	return &Queued{lock: make(chan struct{}, 1), permit: make(chan struct{}, 1)}
}

// LockRefused tells q of a lock attempt in line that ended with err.
func (q *Queued) LockRefused(err error) { tell(err, q.lock) }

// PermitRefused tells q of a permit attempt in line that ended with err.
func (q *Queued) PermitRefused(err error) { tell(err, q.permit) }

func tell(err error, queued chan struct{}) {
	if errors.Is(err, core.ErrNotObtained) {
		select {
		case queued <- struct{}{}:
		default:
		}
	}
}

// Run times the lock's hand-off and the permit's, interleaved, between two
// stores that tell queued[i], and reports permit/lock. The waiters' retry
// policy waits a minute: only a wake-up serves them.
func Run(b *testing.B, stores [2]store.Store, queued [2]*Queued, opts ...core.Option) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var locks, permits [2]func(context.Context) (*core.Lock, error)
	for i, s := range stores {
		l := core.NewLocker(s, append([]core.Option{core.WithRetry(backoff.Constant(time.Minute))}, opts...)...)
		sem := l.Semaphore(1)
		locks[i] = func(ctx context.Context) (*core.Lock, error) { return l.Obtain(ctx, "lock") }
		permits[i] = func(ctx context.Context) (*core.Lock, error) { return sem.Obtain(ctx, "permit") }
	}
	lock := start(ctx, locks, [2]chan struct{}{queued[0].lock, queued[1].lock})
	permit := start(ctx, permits, [2]chan struct{}{queued[0].permit, queued[1].permit})
	b.ReportAllocs()
	benchratio.Ratios(b, benchratio.Cycle{Name: "lock", Run: lock.next}, benchratio.Cycle{Name: "permit", Run: permit.next})
	b.ReportMetric(float64(lock.barged)/float64(b.N), "lock-retaken/op")
	b.ReportMetric(float64(permit.barged)/float64(b.N), "permit-retaken/op")
	cancel()
	lock.stop()
	permit.stop()
}

// handOff is a key passed back and forth between two sides.
type handOff struct {
	got     chan int
	release [2]chan struct{}
	queued  [2]chan struct{}
	holder  int
	barged  int // hand-offs the old holder took again
	done    chan struct{}
}

// start starts both sides: side 0 holds the key, side 1 stands in line.
func start(ctx context.Context, obtain [2]func(context.Context) (*core.Lock, error), queued [2]chan struct{}) *handOff {
	h := &handOff{got: make(chan int), done: make(chan struct{})}
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
