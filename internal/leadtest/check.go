package leadtest

import (
	"fmt"
	"slices"
	"time"
)

// Result is what a run measured.
type Result struct {
	Terms     int             // terms that began
	Acts      int             // acts of leaders that found their context live
	Overlaps  int             // acts of a term after the first act of a later one
	Backwards int             // terms that began below an earlier one
	HandOvers []time.Duration // from each fault to the next term's first act
	Writes    int             // writes the register took
	Refused   int             // writes it refused: late writes of a term that was over
	Stale     int             // writes it took under a term below one it had taken
}

func (r Result) String() string {
	return fmt.Sprintf("terms %d, acts %d, overlaps %d, backwards %d, hand-overs %v, writes %d, refused %d, stale %d",
		r.Terms, r.Acts, r.Overlaps, r.Backwards, r.HandOvers, r.Writes, r.Refused, r.Stale)
}

// Measure reads the run's events and its register.
func (r *Run) Measure() Result {
	var res Result
	events := r.Events()
	type span struct{ first, last int64 }
	acts := map[uint64]*span{}
	var began []uint64
	for _, e := range events {
		switch e.Kind {
		case Begin:
			res.Terms++
			if n := len(began); n > 0 && e.Term <= slices.Max(began) {
				res.Backwards++
			}
			began = append(began, e.Term)
		case Act:
			res.Acts++
			s := acts[e.Term]
			if s == nil {
				s = &span{first: e.T, last: e.T}
				acts[e.Term] = s
			}
			s.first, s.last = min(s.first, e.T), max(s.last, e.T)
		}
	}
	// At most one leader at a time: every act of a term comes before the
	// first act of any later term.
	for _, e := range events {
		if e.Kind != Act {
			continue
		}
		for term, s := range acts {
			if term > e.Term && s.first <= e.T {
				res.Overlaps++
				break
			}
		}
	}
	for _, f := range r.applied() {
		next := int64(-1)
		for term, s := range acts {
			if term > f.Term && (next < 0 || s.first < next) {
				next = s.first
			}
		}
		if next >= 0 {
			res.HandOvers = append(res.HandOvers, time.Duration(next-f.T))
		}
	}
	var highest uint64
	for _, w := range r.Reg.Log() {
		if !w.Accepted {
			res.Refused++
			continue
		}
		res.Writes++
		if w.Term < highest {
			res.Stale++
		}
		highest = max(highest, w.Term)
	}
	return res
}

// Check measures the run and fails the test if two terms overlapped, a
// term went backwards, a stale write was taken, a fault was not followed
// by a new leader within handOver, or nobody wrote.
func (r *Run) Check(handOver time.Duration) Result {
	r.t.Helper()
	res := r.Measure()
	r.t.Logf("%s", res)
	faults := r.applied()
	switch {
	case res.Overlaps > 0:
		r.t.Errorf("%d acts of a term after a later term had begun to act", res.Overlaps)
	case res.Backwards > 0:
		r.t.Errorf("%d terms began below an earlier one", res.Backwards)
	case res.Stale > 0:
		r.t.Errorf("the register took %d stale writes", res.Stale)
	case res.Writes == 0:
		r.t.Error("no leader wrote")
	case len(res.HandOvers) != len(faults):
		r.t.Errorf("%d faults, but only %d followed by a new leader", len(faults), len(res.HandOvers))
	case res.Terms < len(faults)+1:
		r.t.Errorf("%d terms for %d faults", res.Terms, len(faults))
	}
	for i, d := range res.HandOvers {
		if d > handOver {
			r.t.Errorf("after the %v of %s the next leader acted %v later, want at most %v", faults[i].Fault, faults[i].Who, d, handOver)
		}
	}
	return res
}
