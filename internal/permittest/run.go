package permittest

import (
	"cmp"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
)

// Run gathers the events of one scenario's instances.
type Run struct {
	t   testing.TB
	N   int           // the permits of Key
	TTL time.Duration // every permit's lease
	Reg *Register

	mu      sync.Mutex
	events  []Event
	next    map[string]chan struct{} // by instance: closed at its next acquire
	stops   []func()
	stopped bool
	serving string // the register's URL, once served for children
}

// NewRun returns a run of n permits whose leases last ttl, writing to a
// fenced register.
func NewRun(t testing.TB, n int, ttl time.Duration) *Run {
	r := &Run{t: t, N: n, TTL: ttl, Reg: NewRegister(n), next: map[string]chan struct{}{}}
	t.Cleanup(r.Stop)
	return r
}

// Add records an event of any instance.
func (r *Run) Add(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	if e.Kind == Acquire {
		if ch, ok := r.next[e.Who]; ok {
			close(ch)
			delete(r.next, e.Who)
		}
	}
}

// NextHold returns a channel closed when instance who is next granted a
// permit.
func (r *Run) NextHold(who string) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	ch, ok := r.next[who]
	if !ok {
		ch = make(chan struct{})
		r.next[who] = ch
	}
	return ch
}

// Held waits until instance who is next granted a permit, up to d; it
// reports whether it was.
func (r *Run) Held(who string, d time.Duration) bool {
	select {
	case <-r.NextHold(who):
		return true
	case <-time.After(d):
		return false
	}
}

// Events is every event so far, in time order.
func (r *Run) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev := slices.Clone(r.events)
	slices.SortStableFunc(ev, func(a, b Event) int { return cmp.Compare(a.T, b.T) })
	return ev
}

// onStop adds f to what Stop does.
func (r *Run) onStop(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stops = append(r.stops, f)
}

// Stop ends every instance and waits for the last of their events. It is
// safe to call more than once.
func (r *Run) Stop() {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return
	}
	r.stopped = true
	stops := r.stops
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, f := range stops {
		wg.Go(f)
	}
	wg.Wait()
}

// quiet drops the Locker's log lines: the scenarios lose permits on purpose.
var quiet = core.WithLogger(slog.New(slog.DiscardHandler))
