package safety

import (
	"fmt"
	"time"
)

// Overlap is two holds by different workers that were open at the same time.
type Overlap struct {
	A, B Hold
	// Possible: one of the two is an acquire whose outcome is unknown.
	Possible bool
}

func (o Overlap) String() string {
	kind := "overlap"
	if o.Possible {
		kind = "possible overlap"
	}
	return fmt.Sprintf("%s: %s (fence %d) and %s (fence %d) for %v", kind,
		o.A.Worker, o.A.Fence, o.B.Worker, o.B.Fence, time.Duration(min(o.A.End, o.B.End)-max(o.A.Start, o.B.Start)))
}

// CheckOverlap returns every pair of holds by different workers whose
// intervals intersect. A hold that ends at the instant another starts does
// not overlap it. Pairs with a possible hold are returned marked Possible:
// the lock may have been held twice, though the unknown acquirer did not
// act on it.
func CheckOverlap(holds []Hold) []Overlap {
	var out []Overlap
	for i, a := range holds {
		for _, b := range holds[i+1:] {
			if a.Worker == b.Worker || a.Possible && b.Possible {
				continue
			}
			if a.Start < b.End && b.Start < a.End {
				out = append(out, Overlap{A: a, B: b, Possible: a.Possible || b.Possible})
			}
		}
	}
	return out
}

// Definite counts the overlaps that are not merely possible.
func Definite(os []Overlap) int {
	n := 0
	for _, o := range os {
		if !o.Possible {
			n++
		}
	}
	return n
}

// LostUpdate is an accepted write whose base was not the value it replaced:
// another write landed between its read and its write, and was lost.
type LostUpdate struct {
	Write    Access
	Replaced int64
}

func (l LostUpdate) String() string {
	return fmt.Sprintf("lost update: %s (fence %d) wrote %d based on %d over %d",
		l.Write.Worker, l.Write.Fence, l.Write.Value, l.Write.Base, l.Replaced)
}

// CheckLostUpdates replays the account's accepted writes in the order the
// account took them and returns each one that was not based on the value it
// replaced.
func CheckLostUpdates(log []Access) []LostUpdate {
	var out []LostUpdate
	var cur int64
	for _, a := range log {
		if !a.Write || !a.Accepted {
			continue
		}
		if a.Base != cur {
			out = append(out, LostUpdate{Write: a, Replaced: cur})
		}
		cur = a.Value
	}
	return out
}

// StaleWrite is an accepted write whose fence was below one the account had
// seen before, or repeated the fence of the write before it.
type StaleWrite struct {
	Write   Access
	Highest uint64 // the highest fence seen before it
}

func (s StaleWrite) String() string {
	return fmt.Sprintf("stale write accepted: %s with fence %d after fence %d was seen",
		s.Write.Worker, s.Write.Fence, s.Highest)
}

// CheckStaleWrites replays the account's log, reads included, and returns
// every accepted write that a resource refusing fences at or below the
// highest it has seen would have refused. The account's own verdicts are
// not trusted: an unfenced account, or a broken fence check, shows here.
func CheckStaleWrites(log []Access) []StaleWrite {
	var out []StaleWrite
	var highest, lastWrite uint64
	for _, a := range log {
		if a.Write && a.Accepted && (a.Fence < highest || a.Fence <= lastWrite) {
			out = append(out, StaleWrite{Write: a, Highest: max(highest, lastWrite)})
		}
		highest = max(highest, a.Fence)
		if a.Write && a.Accepted {
			lastWrite = a.Fence
		}
	}
	return out
}

// Refused counts the writes the account turned away.
func Refused(log []Access) int {
	n := 0
	for _, a := range log {
		if a.Write && !a.Accepted {
			n++
		}
	}
	return n
}

// RefusedReads counts the reads the account refused: a holder whose fence
// was below one the account had already seen: a holder that reads late,
// past its lease, or fences that went back.
func RefusedReads(log []Access) int {
	n := 0
	for _, a := range log {
		if !a.Write && !a.Accepted {
			n++
		}
	}
	return n
}

// LateLost is a hold whose Lost() fired after another worker's acquire
// returned: for a while both believed they held the lock.
type LateLost struct {
	Hold Hold
	Next Hold
}

// Late is how long after the next acquire Lost() fired.
func (l LateLost) Late() time.Duration { return time.Duration(l.Hold.LostAt - l.Next.Start) }

func (l LateLost) String() string {
	return fmt.Sprintf("late Lost: %s (fence %d) heard of its loss %v after %s (fence %d) acquired",
		l.Hold.Worker, l.Hold.Fence, l.Late(), l.Next.Worker, l.Next.Fence)
}

// LostLead is, for each hold whose Lost() fired, how long before the next
// other worker's acquire it fired (negative: after). ok is false when no
// Lost() fired before another acquire, so there is nothing to measure.
func LostLead(holds []Hold) (worst time.Duration, ok bool) {
	for _, h := range holds {
		if h.LostAt == 0 || h.Possible {
			continue
		}
		if n, found := nextHolder(holds, h); found {
			lead := time.Duration(n.Start - h.LostAt)
			if !ok || lead < worst {
				worst, ok = lead, true
			}
		}
	}
	return worst, ok
}

// CheckLostLatency returns each hold whose Lost() fired later than the next
// acquire by another worker.
func CheckLostLatency(holds []Hold) []LateLost {
	var out []LateLost
	for _, h := range holds {
		if h.LostAt == 0 || h.Possible {
			continue
		}
		if n, ok := nextHolder(holds, h); ok && h.LostAt > n.Start {
			out = append(out, LateLost{Hold: h, Next: n})
		}
	}
	return out
}

// nextHolder is the first definite hold by another worker that began after
// h began.
func nextHolder(holds []Hold, h Hold) (Hold, bool) {
	var best Hold
	found := false
	for _, o := range holds {
		if o.Possible || o.Worker == h.Worker || o.Start <= h.Start {
			continue
		}
		if !found || o.Start < best.Start {
			best, found = o, true
		}
	}
	return best, found
}
