package permittest

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

// Key is the key whose permits every instance takes.
const Key = "permittest:key"

// holder is one instance's loop: take a permit, write, pause, write, give
// it back, and again.
type holder struct {
	who   string
	sem   *core.Semaphore
	ttl   time.Duration
	w     Writer
	emit  func(Event)
	pause time.Duration // the longest pause between the two writes of a hold
}

// newSemaphore is the Semaphore of an instance: a Locker of its own on s,
// without the watchdog, so that a permit's validity is its lease less the
// margin from the moment it was asked for (see the package doc).
func newSemaphore(s core.Store, n int, ttl time.Duration, name string) *core.Semaphore {
	return core.NewLocker(s, core.WithTTL(ttl), core.WithHolder(name), core.WithoutWatchdog(), quiet).Semaphore(n)
}

func (h *holder) run(ctx context.Context) {
	for ctx.Err() == nil {
		h.cycle(ctx)
	}
}

// cycle is one attempt; a refused one waits a moment before the next.
// Attempts are TryObtain, so that the moment the permit was asked for is
// known: a waiting Obtain would ask again later, unseen.
func (h *holder) cycle(ctx context.Context) {
	asked := now()
	actx, cancel := context.WithTimeout(ctx, time.Second)
	lk, err := h.sem.TryObtain(actx, Key)
	cancel()
	if err != nil {
		d := time.Millisecond + rand.N(3*time.Millisecond)
		if !errors.Is(err, core.ErrNotObtained) {
			d = 20 * time.Millisecond // the store is in trouble: do not spin on it
		}
		sleep(ctx, d)
		return
	}
	fence := lk.Fence()
	h.emit(Event{T: now(), Who: h.who, Kind: Acquire, Fence: fence, Until: asked + int64(store.Validity(h.ttl))})
	done := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-lk.Lost():
			h.emit(Event{T: now(), Who: h.who, Kind: Lost, Fence: fence})
		case <-done:
		}
	}()
	// The writes go out whatever the permit's state: a holder stopped
	// between them cannot check first, and that is what the fence is for.
	wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	_ = h.w.Write(wctx, h.who, fence)
	if h.pause > 0 {
		sleep(ctx, rand.N(h.pause))
	}
	_ = h.w.Write(wctx, h.who, fence)
	wcancel()
	close(done)
	<-watched
	h.emit(Event{T: now(), Who: h.who, Kind: Release, Fence: fence})
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	_ = lk.Release(rctx)
	rcancel()
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
