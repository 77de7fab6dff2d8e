package leadtest

import (
	"cmp"
	"slices"
	"sync"
	"testing"
	"time"
)

// Instance is one of the processes that campaign.
type Instance interface {
	Name() string
	// Kill ends the instance without a word to the store: its lock stays
	// until its lease runs out.
	Kill()
	// Pause stops the instance for d: its renewals stop, and it resumes
	// afterwards. It returns when the instance runs again.
	Pause(d time.Duration)
}

// Fault is what a scenario does to the leader.
type Fault int

const (
	Kill  Fault = iota // Instance.Kill
	Pause              // Instance.Pause for two leases
	Hold               // the instance's store link holds its bytes for two leases, then delivers them late (StartLinked; StartLocal: its gate)
)

func (f Fault) String() string { return [...]string{"kill", "pause", "hold the link of"}[f] }

// Run gathers the events of one scenario's instances.
type Run struct {
	t   testing.TB
	TTL time.Duration
	Reg *Register
	Key string // the key the instances lead: Key, and the test's name

	mu      sync.Mutex
	events  []Event
	leader  string // who began the highest term so far
	term    uint64
	changed chan struct{} // closed and replaced at each new term
	faults  []applied
	serving string // the register's URL, once served for children
}

// applied is a fault as it was done: to whom, when, during which term.
type applied struct {
	Fault
	T    int64
	Who  string
	Term uint64
}

// NewRun returns a run whose leases last ttl.
func NewRun(t testing.TB, ttl time.Duration) *Run {
	return &Run{t: t, TTL: ttl, Reg: &Register{}, Key: Key + ":" + t.Name(), changed: make(chan struct{})}
}

// Add records an event of any instance.
func (r *Run) Add(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	if e.Kind == Begin && e.Term > r.term {
		r.leader, r.term = e.Who, e.Term
		close(r.changed)
		r.changed = make(chan struct{})
	}
}

// awaitTerm waits until a term above after begins, up to d; it returns
// that term's leader, or "" if none came.
func (r *Run) awaitTerm(after uint64, d time.Duration) (string, uint64) {
	deadline := time.After(d)
	for {
		r.mu.Lock()
		who, term, ch := r.leader, r.term, r.changed
		r.mu.Unlock()
		if term > after {
			return who, term
		}
		select {
		case <-ch:
		case <-deadline:
			return "", 0
		}
	}
}

// Drive lets the instances lead, and does each fault in turn to whoever
// leads then, a while into its term; it returns after the last new leader
// has led for a while too. It fails the test if a term does not follow a
// fault within a generous bound (Check measures the hand-over itself).
func (r *Run) Drive(insts []Instance, faults ...Fault) {
	r.t.Helper()
	byName := make(map[string]Instance, len(insts))
	for _, in := range insts {
		byName[in.Name()] = in
	}
	lead := r.TTL + 10*time.Second // a first start-up under -race on a busy machine
	who, term := r.awaitTerm(0, lead)
	if who == "" {
		r.t.Fatal("no instance led")
	}
	var paused sync.WaitGroup
	defer paused.Wait()
	for _, f := range faults {
		time.Sleep(r.TTL)
		r.mu.Lock()
		who, term = r.leader, r.term
		r.faults = append(r.faults, applied{Fault: f, T: now(), Who: who, Term: term})
		r.mu.Unlock()
		r.t.Logf("%v the leader %s in term %d", f, who, term)
		in := byName[who]
		switch f {
		case Kill:
			in.Kill()
		case Pause, Hold:
			l, isLocal := in.(*local)
			if f == Hold && !isLocal {
				r.t.Fatalf("%s has no link to hold: start it with StartLinked or StartLocal", who)
			}
			paused.Add(1)
			go func() {
				defer paused.Done()
				if f == Hold {
					l.holdLink(2 * r.TTL)
				} else {
					in.Pause(2 * r.TTL)
				}
			}()
		}
		if next, _ := r.awaitTerm(term, 2*r.TTL+5*time.Second); next == "" {
			r.t.Fatalf("no new leader after the %v of %s", f, who)
		}
	}
	time.Sleep(r.TTL)
}

// Events is every event so far, in time order.
func (r *Run) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev := slices.Clone(r.events)
	slices.SortStableFunc(ev, func(a, b Event) int { return cmp.Compare(a.T, b.T) })
	return ev
}

func (r *Run) applied() []applied {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.faults)
}
