package permittest

import (
	"bufio"
	"encoding/json"
	"io"
	"sync"
)

// Kind is what an instance did.
type Kind string

const (
	Acquire Kind = "acquire" // a permit was granted; Until is when its validity ends
	Lost    Kind = "lost"    // the permit's Lost() fired
	Release Kind = "release" // the holder invoked Release: it trusts the permit no longer
)

// Event is one step of an instance, at T (CLOCK_MONOTONIC nanoseconds).
type Event struct {
	T     int64  `json:"t"`
	Who   string `json:"w"`
	Kind  Kind   `json:"k"`
	Fence uint64 `json:"f"`
	// Until, on an Acquire: the end of the permit's validity by the
	// holder's clock, the lease less store.Drift from the moment it asked.
	Until int64 `json:"u,omitempty"`
}

// jsonLines writes events as JSON lines to w, one at a time.
type jsonLines struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func (j *jsonLines) emit(e Event) {
	j.mu.Lock()
	defer j.mu.Unlock()
	_ = j.enc.Encode(e) // the parent reads to the end; a broken pipe means it is gone
}

// decode calls f with every event line of r; other lines are skipped (a
// test binary also prints its own).
func decode(r io.Reader, f func(Event)) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		b := sc.Bytes()
		if len(b) == 0 || b[0] != '{' {
			continue
		}
		var e Event
		if json.Unmarshal(b, &e) == nil && e.Kind != "" {
			f(e)
		}
	}
}
