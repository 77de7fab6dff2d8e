package storetest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

// notice is a LapseNotice that records what the store did with it.
type notice struct{ lapsed, finished atomic.Bool }

func (n *notice) Lapse() func() {
	n.lapsed.Store(true)
	return func() { n.finished.Store(true) }
}

// acquirePath is one of the calls through which a Locker takes a key: take
// takes the free key of l and returns the lease as held (an acquire in
// line on a Granter holds it under the waiter's token).
type acquirePath struct {
	name string
	take func(f *fixture, ctx context.Context, l store.Lease) store.Lease
}

// acquirePaths are the calls s offers to take a key: Acquire, and
// AcquireQueued (Waker) and AcquireOrRecord (Recorder) when it has them. A
// Locker hands its LapseNotice to each, so the store must honour it on each.
func acquirePaths(s core.Store) []acquirePath {
	paths := []acquirePath{{"Acquire", func(f *fixture, ctx context.Context, l store.Lease) store.Lease {
		f.t.Helper()
		if _, err := f.s.Acquire(ctx, l); err != nil {
			f.t.Fatalf("Acquire of a free key: %v", err)
		}
		return l
	}}}
	if _, ok := s.(store.Waker); ok {
		paths = append(paths, acquirePath{"AcquireQueued", func(f *fixture, ctx context.Context, l store.Lease) store.Lease {
			f.t.Helper()
			waiter := waiterIn(random())
			if _, ok := f.s.(store.Granter); ok {
				l.Token = store.HandedOverToken(waiter)
			}
			if _, _, err := f.s.(store.Waker).AcquireQueued(ctx, l, waiter, false); err != nil {
				f.t.Fatalf("AcquireQueued of a free key: %v", err)
			}
			return l
		}})
	}
	if _, ok := s.(store.Recorder); ok {
		paths = append(paths, acquirePath{"AcquireOrRecord", func(f *fixture, ctx context.Context, l store.Lease) store.Lease {
			f.t.Helper()
			if g, rec, err := f.s.(store.Recorder).AcquireOrRecord(ctx, l); err != nil || rec != nil || g.Fence == 0 {
				f.t.Fatalf("AcquireOrRecord of a free key with no record: %+v, %q, %v; want the lock", g, rec, err)
			}
			return l
		}})
	}
	return paths
}

// A store that tells lapses (the holder is in its process) tells a holder
// whose lease ran out, before the next caller's acquire of the key
// returns, whichever call the holder took the key with (one subtest each);
// a live holder whose key another caller finds taken, and a holder that
// released, are told nothing.
func contractLapseNotice(t *testing.T, h Harness) {
	s := open(t, h).s
	if lt, ok := s.(store.LapseTeller); ok && !lt.TellsLapses() {
		t.Skip("the store tells no lapses (store.LapseTeller): its holders learn of a lapsed lease from their own clock")
	}
	for _, p := range acquirePaths(s) {
		t.Run(p.name, func(t *testing.T) {
			f := open(t, h)
			key := f.key()
			live := &notice{}
			l := p.take(f, store.WithLapseNotice(f.ctx, live), f.lease(key, h.long()))
			f.mustBeTaken(key, "a live holder's key")
			if live.lapsed.Load() {
				t.Fatalf("a live holder (taken with %s) was told its lease lapsed when another caller found its key taken", p.name)
			}
			f.release(l)
			lapsing := &notice{}
			p.take(f, store.WithLapseNotice(f.ctx, lapsing), f.lease(key, h.short()))
			time.Sleep(h.short())
			f.awaitFree(key, "the lease to run out")
			if !lapsing.lapsed.Load() || !lapsing.finished.Load() {
				t.Fatalf("another caller took the key of a lapsed holder (taken with %s), and its notice was lapsed=%v, finished=%v; want both before that acquire returned",
					p.name, lapsing.lapsed.Load(), lapsing.finished.Load())
			}
			if live.lapsed.Load() {
				t.Fatalf("a holder that released (taken with %s) was told its lease lapsed", p.name)
			}
		})
	}
}
