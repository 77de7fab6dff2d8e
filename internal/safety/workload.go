package safety

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reqlock/reqlock/core"
)

// Worker takes the lock on one key and does a read-modify-write on the
// account while it holds it, recording every step in its history.
type Worker struct {
	Name    string
	Locker  *core.Locker
	Key     string
	Account *AccountClient
	History *History
	// Pause is how long to wait between the read and the write, drawn for
	// each hold: the work a real holder does, or a GC pause. Nil: none.
	Pause func() time.Duration
	// ObtainTimeout bounds each Obtain (default 2s).
	ObtainTimeout time.Duration

	holding atomic.Bool
	held    chan struct{} // closed and replaced each time an acquire succeeds
	heldMu  sync.Mutex
}

// Holding reports whether the worker believes it holds the lock now.
func (w *Worker) Holding() bool { return w.holding.Load() }

// NextHold returns a channel closed the next time the worker acquires.
func (w *Worker) NextHold() <-chan struct{} {
	w.heldMu.Lock()
	defer w.heldMu.Unlock()
	if w.held == nil {
		w.held = make(chan struct{})
	}
	return w.held
}

func (w *Worker) signalHeld() {
	w.heldMu.Lock()
	defer w.heldMu.Unlock()
	if w.held != nil {
		close(w.held)
	}
	w.held = make(chan struct{})
}

// RandomPause draws a pause uniformly from [0, max).
func RandomPause(max time.Duration) func() time.Duration {
	return func() time.Duration { return rand.N(max) }
}

// Run does cycles until ops of them were tried or until passes, whichever
// comes first, or ctx ends. It returns the number of cycles in which it
// held the lock.
func (w *Worker) Run(ctx context.Context, ops int, until time.Time) int {
	held := 0
	for i := 0; i < ops && time.Now().Before(until) && ctx.Err() == nil; i++ {
		if w.Cycle(ctx) {
			held++
		}
	}
	return held
}

// Cycle is one acquire, read, pause, write, release. It reports whether the
// acquire succeeded. The write is sent even when Lost() fired during the
// pause: a holder that paused cannot check first, and that is what fences
// are for.
func (w *Worker) Cycle(ctx context.Context) bool {
	h := w.History
	timeout := w.ObtainTimeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	h.Add(Event{Worker: w.Name, Kind: Acquire, Type: Invoke, Lease: int64(w.Locker.TTL())})
	octx, cancel := context.WithTimeout(ctx, timeout)
	lk, err := w.Locker.Obtain(octx, w.Key)
	cancel()
	if err != nil {
		typ := Fail
		if errors.Is(err, core.ErrUnavailable) {
			typ = Unknown
		}
		h.Add(Event{Worker: w.Name, Kind: Acquire, Type: typ, Err: err.Error()})
		if typ == Unknown {
			sleep(ctx, 10*time.Millisecond) // the store is in trouble; do not spin on it
		}
		return false
	}
	fence := lk.Fence()
	h.Add(Event{Worker: w.Name, Kind: Acquire, Type: OK, Fence: fence})
	w.holding.Store(true)
	w.signalHeld()

	done := make(chan struct{})
	var watch sync.WaitGroup
	watch.Go(func() {
		select {
		case <-lk.Lost():
			w.holding.Store(false)
			h.Add(Event{Worker: w.Name, Kind: LostSig, Type: OK, Fence: fence})
		case <-done:
		}
	})
	defer func() {
		close(done)
		watch.Wait()
	}()

	h.Add(Event{Worker: w.Name, Kind: Read, Type: Invoke, Fence: fence})
	v, err := w.Account.Read(ctx, w.Name, fence)
	if err != nil {
		h.Add(Event{Worker: w.Name, Kind: Read, Type: Fail, Fence: fence, Err: err.Error()})
	} else {
		h.Add(Event{Worker: w.Name, Kind: Read, Type: OK, Fence: fence})
		if w.Pause != nil {
			sleep(ctx, w.Pause())
		}
		h.Add(Event{Worker: w.Name, Kind: Write, Type: Invoke, Fence: fence})
		if err := w.Account.Write(ctx, w.Name, fence, v, v+1); err != nil {
			h.Add(Event{Worker: w.Name, Kind: Write, Type: Fail, Fence: fence, Err: err.Error()})
		} else {
			h.Add(Event{Worker: w.Name, Kind: Write, Type: OK, Fence: fence})
		}
	}

	w.holding.Store(false)
	h.Add(Event{Worker: w.Name, Kind: Release, Type: Invoke, Fence: fence})
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	err = lk.Release(rctx)
	cancel()
	switch {
	case err == nil:
		h.Add(Event{Worker: w.Name, Kind: Release, Type: OK, Fence: fence})
	case errors.Is(err, core.ErrUnavailable):
		h.Add(Event{Worker: w.Name, Kind: Release, Type: Unknown, Fence: fence, Err: err.Error()})
	default:
		h.Add(Event{Worker: w.Name, Kind: Release, Type: Fail, Fence: fence, Err: err.Error()})
	}
	return true
}

func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
