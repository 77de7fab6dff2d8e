package safety

import (
	"bufio"
	"cmp"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"sync"
)

// Kind is what a worker did.
type Kind string

const (
	Acquire Kind = "acquire" // Obtain
	Read    Kind = "read"    // read the account
	Write   Kind = "write"   // write the account
	Release Kind = "release" // Release
	LostSig Kind = "lost"    // Lock.Lost() fired (Type is always OK)
)

// Type is where an operation stands.
type Type string

const (
	Invoke  Type = "invoke"  // started
	OK      Type = "ok"      // done, and it happened
	Fail    Type = "fail"    // done, and it did not happen
	Unknown Type = "unknown" // done, and nobody can say whether it happened
)

// Event is one line of a history. Times are Now() readings.
type Event struct {
	T      int64  `json:"t"`
	Worker string `json:"w"`
	Kind   Kind   `json:"k"`
	Type   Type   `json:"y"`
	Fence  uint64 `json:"f,omitempty"`
	// Lease is the lock's TTL in nanoseconds, on an acquire's invoke: how
	// long an acquire whose outcome is unknown may hold the lock.
	Lease int64  `json:"l,omitempty"`
	Err   string `json:"e,omitempty"`
}

// History collects events from any number of goroutines.
type History struct {
	mu     sync.Mutex
	events []Event
	sink   io.Writer // when set, every event is also written there as a JSON line
}

// NewHistory returns an empty history; when sink is not nil, each event is
// also written to it as one JSON line as it happens (a worker process
// reports to its parent that way).
func NewHistory(sink io.Writer) *History { return &History{sink: sink} }

// Add records e, stamping the time if e has none.
func (h *History) Add(e Event) Event {
	if e.T == 0 {
		e.T = Now()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, e)
	if h.sink != nil {
		b, _ := json.Marshal(e) // an Event always marshals
		_, _ = h.sink.Write(append(b, '\n'))
	}
	return e
}

// Events returns a copy of the events, in time order.
func (h *History) Events() []Event {
	h.mu.Lock()
	out := slices.Clone(h.events)
	h.mu.Unlock()
	slices.SortStableFunc(out, func(a, b Event) int { return cmp.Compare(a.T, b.T) })
	return out
}

// Hold is one worker's belief that it held the lock, from the moment its
// acquire returned until it invoked Release or its Lost() fired, whichever
// came first. A Possible hold is an acquire whose outcome is unknown: it
// may have taken the lock, from its invoke until its lease ran out.
type Hold struct {
	Worker   string
	Fence    uint64
	Start    int64
	End      int64
	LostAt   int64 // when Lost() fired, or 0
	Possible bool
}

// Holds derives the holds of a history. A hold still open when the history
// ends lasts until the end.
func Holds(events []Event) []Hold {
	var out []Hold
	var end int64
	for _, e := range events {
		end = max(end, e.T)
	}
	open := map[string]int{} // worker → index in out of its open hold
	for _, e := range events {
		i, isOpen := open[e.Worker]
		switch {
		case e.Kind == Acquire && e.Type == OK:
			out = append(out, Hold{Worker: e.Worker, Fence: e.Fence, Start: e.T, End: end})
			open[e.Worker] = len(out) - 1
		case e.Kind == Acquire && e.Type == Unknown:
			lease := e.Lease
			if lease == 0 {
				lease = end - e.T
			}
			// From the invoke: the lock may have been taken at any point
			// after it.
			start := invokeBefore(events, e)
			out = append(out, Hold{Worker: e.Worker, Start: start, End: min(start+lease, end), Possible: true})
		case e.Kind == Release && e.Type == Invoke && isOpen:
			out[i].End = min(out[i].End, e.T)
			delete(open, e.Worker)
		case e.Kind == LostSig && isOpen && out[i].Fence == e.Fence:
			out[i].LostAt = e.T
			out[i].End = min(out[i].End, e.T)
			delete(open, e.Worker)
		case e.Kind == LostSig:
			// Lost after the holder already invoked Release, or for a hold
			// already closed: attach the time for the latency checker.
			for j := len(out) - 1; j >= 0; j-- {
				if out[j].Worker == e.Worker && out[j].Fence == e.Fence && !out[j].Possible {
					if out[j].LostAt == 0 {
						out[j].LostAt = e.T
					}
					break
				}
			}
		}
	}
	return out
}

// invokeBefore is the time of the invoke that completion c answers: the
// worker's last acquire invoke before it.
func invokeBefore(events []Event, c Event) int64 {
	t := c.T
	for _, e := range events {
		if e.T > c.T {
			break
		}
		if e.Worker == c.Worker && e.Kind == Acquire && e.Type == Invoke {
			t = e.T
		}
	}
	return t
}

// DecodeEvents reads JSON-lines events from r, as a History with a sink
// writes them, calling fn for each, until r ends. Lines that are not events
// (a worker's own log output) are skipped.
func DecodeEvents(r io.Reader, fn func(Event)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var e Event
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Kind != "" {
			fn(e)
		}
	}
	return sc.Err()
}

// ReadEvents is DecodeEvents over a string, collecting the events.
func ReadEvents(s string) ([]Event, error) {
	var out []Event
	err := DecodeEvents(strings.NewReader(s), func(e Event) { out = append(out, e) })
	return out, err
}
