package leadtest

import (
	"bufio"
	"encoding/json"
	"io"
	"sync"
)

// Kind is what an instance did.
type Kind string

const (
	Begin Kind = "begin" // its fn started, for a term
	Act   Kind = "act"   // it checked its context, found it live, and acted as leader
	End   Kind = "end"   // its fn found its context over and returned
)

// Event is one step of an instance, at T (CLOCK_MONOTONIC).
type Event struct {
	T    int64  `json:"t"`
	Who  string `json:"w"`
	Kind Kind   `json:"k"`
	Term uint64 `json:"f"`
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
		if json.Unmarshal(b, &e) == nil {
			f(e)
		}
	}
}
