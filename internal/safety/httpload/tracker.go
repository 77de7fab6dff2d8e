package httpload

import (
	"crypto/sha256"
	"net/http"
	"sync"
	"time"

	"github.com/reqlock/reqlock/core"
)

// RanBody is what a Tracker's handler answers: a 200 with any other body
// (an empty one above all) did not come from the handler.
const RanBody = "ran\n"

// HoldHeader asks a Tracker's handler to stay inside until Tracker.Let.
const HoldHeader = "X-Hold"

// Tracker is the app's handler under load: it counts runs per lock key and
// notices two runs for one key at once.
type Tracker struct {
	mu       sync.Mutex
	in       map[lockID]int
	runs     map[lockID]int
	total    int
	unlocked int
	overlaps int
	examples []string
	held     chan struct{} // a HoldHeader request entered
	let      chan struct{} // lets it go
}

// NewTracker returns a Tracker with no runs.
func NewTracker() *Tracker {
	return &Tracker{in: map[lockID]int{}, runs: map[lockID]int{},
		held: make(chan struct{}, 64), let: make(chan struct{}, 64)}
}

// Handler returns the handler: it takes pause() inside (cut short when the
// request's context ends, as when the lock is lost) and answers 200 RanBody.
// A request that runs without a lock (no key, fail-open) is counted apart.
func (tr *Tracker) Handler(pause func() time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := ""
		if lk, ok := core.FromContext(r.Context()); ok {
			key = lk.Key()
		}
		tr.enter(key)
		if r.Header.Get(HoldHeader) != "" {
			tr.held <- struct{}{}
			select {
			case <-tr.let:
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
		}
		if d := pause(); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-r.Context().Done():
			}
			t.Stop()
		}
		tr.exit(key)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(RanBody))
	})
}

// Held waits up to 10s for a HoldHeader request to enter.
func (tr *Tracker) Held() bool {
	select {
	case <-tr.held:
		return true
	case <-time.After(10 * time.Second):
		return false
	}
}

// Let lets one held request go.
func (tr *Tracker) Let() { tr.let <- struct{}{} }

// lockID stands for a lock key in the Tracker's maps: a flood of distinct
// 1 KiB keys must not make the Tracker the thing that grows.
type lockID [16]byte

func idOf(key string) lockID {
	sum := sha256.Sum256([]byte(key))
	return lockID(sum[:16])
}

func (tr *Tracker) enter(key string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.total++
	if key == "" {
		tr.unlocked++
		return
	}
	id := idOf(key)
	tr.runs[id]++
	tr.in[id]++
	if tr.in[id] > 1 {
		tr.overlaps++
		if len(tr.examples) < 3 {
			tr.examples = append(tr.examples, clip([]byte(key)))
		}
	}
}

func (tr *Tracker) exit(key string) {
	if key == "" {
		return
	}
	id := idOf(key)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.in[id]--; tr.in[id] == 0 {
		delete(tr.in, id)
	}
}

// Stats are a Tracker's counts.
type Stats struct {
	Runs     int      // handler runs
	Unlocked int      // of which without a lock
	Keys     int      // distinct lock keys that ran
	Overlaps int      // runs that began while another run for the key was inside
	Examples []string // lock keys that overlapped
}

// Stats returns the counts so far.
func (tr *Tracker) Stats() Stats {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return Stats{Runs: tr.total, Unlocked: tr.unlocked, Keys: len(tr.runs), Overlaps: tr.overlaps,
		Examples: append([]string(nil), tr.examples...)}
}
