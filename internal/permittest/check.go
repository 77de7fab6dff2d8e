package permittest

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Trust is one holder's trust in one permit: from its acquire's return to
// the first of its Release, its Lost() and the end of its validity.
type Trust struct {
	Who        string
	Fence      uint64
	Start, End int64
}

// Trusts derives every permit's trust from the events of a run.
func Trusts(events []Event) []Trust {
	type id struct {
		who   string
		fence uint64
	}
	var out []Trust
	open := map[id]int{}
	for _, e := range events {
		k := id{e.Who, e.Fence}
		switch e.Kind {
		case Acquire:
			out = append(out, Trust{Who: e.Who, Fence: e.Fence, Start: e.T, End: e.Until})
			open[k] = len(out) - 1
		case Lost, Release:
			if i, ok := open[k]; ok {
				out[i].End = min(out[i].End, e.T)
			}
		}
	}
	// A grant that came back after its validity ran out was never trusted.
	return slices.DeleteFunc(out, func(t Trust) bool { return t.End <= t.Start })
}

// MostTrusting is the largest number of permits trusted at one instant,
// with the holders at the first instant it was reached. A trust that ends
// at the instant another begins does not overlap it.
func MostTrusting(trusts []Trust) (n int, holders []Trust) {
	type edge struct {
		t     int64
		delta int
		i     int
	}
	edges := make([]edge, 0, 2*len(trusts))
	for i, tr := range trusts {
		edges = append(edges, edge{tr.Start, 1, i}, edge{tr.End, -1, i})
	}
	// At one instant, ends before starts.
	slices.SortFunc(edges, func(a, b edge) int {
		return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.delta, b.delta))
	})
	live := map[int]bool{}
	for _, e := range edges {
		if e.delta < 0 {
			delete(live, e.i)
			continue
		}
		live[e.i] = true
		if len(live) > n {
			n = len(live)
			holders = holders[:0]
			for i := range live {
				holders = append(holders, trusts[i])
			}
		}
	}
	slices.SortFunc(holders, func(a, b Trust) int { return cmp.Compare(a.Fence, b.Fence) })
	return n, holders
}

// StaleWrite is a write the register took though N higher fences had
// written before it.
type StaleWrite struct {
	Write  Write
	Lowest uint64 // the lowest of the N highest fences accepted before it
}

func (s StaleWrite) String() string {
	return fmt.Sprintf("stale write accepted: %s with fence %d, below %d, the lowest of the highest fences accepted before it",
		s.Write.Who, s.Write.Fence, s.Lowest)
}

// CheckStaleWrites replays the register's log for n permits and returns
// every accepted write that the rule (see Register) would have refused.
// The register's own verdicts are not trusted: an unfenced register, or a
// broken check, shows here.
func CheckStaleWrites(log []Write, n int) []StaleWrite {
	var out []StaleWrite
	var top []uint64
	for _, w := range log {
		if !w.Accepted {
			continue
		}
		if !admits(top, n, w.Fence) {
			out = append(out, StaleWrite{Write: w, Lowest: top[0]})
		}
		top = remember(top, n, w.Fence)
	}
	return out
}

// Result is what a run measured.
type Result struct {
	Holds       int // permits granted
	MostTrusted int // the most permits trusted at once
	Writes      int // writes the register took
	Refused     int // writes it refused
	// RefusedTrusted: refused writes whose holder still trusted its
	// permit: honest holders that N newer permits overtook.
	RefusedTrusted int
	Stale          int // writes it took that its rule refuses
	Verdict        string
}

func (r Result) String() string {
	return fmt.Sprintf("holds %d, most trusted at once %d, writes %d, refused %d (%d still trusted), stale %d",
		r.Holds, r.MostTrusted, r.Writes, r.Refused, r.RefusedTrusted, r.Stale)
}

// Expect is what a scenario's documentation lets it expect, written down
// before it runs.
type Expect struct {
	// MoreThanN: the store may lose its permits (a restart without
	// persistence), and more than N holders may trust theirs at once.
	MoreThanN bool
	// Refused: the fault is built to make the register refuse a stale
	// write (a holder stopped past its lease), and the run fails if it
	// does not.
	Refused bool
	// Broken: a deliberately broken setup; the checks must catch it: more
	// than N trusted at once, or a stale write taken.
	Broken bool
}

// Measure reads the run's events and its register.
func (r *Run) Measure() Result {
	var res Result
	events := r.Events()
	for _, e := range events {
		if e.Kind == Acquire {
			res.Holds++
		}
	}
	trusts := Trusts(events)
	res.MostTrusted, _ = MostTrusting(trusts)
	type id struct {
		who   string
		fence uint64
	}
	byID := make(map[id]Trust, len(trusts))
	for _, tr := range trusts {
		byID[id{tr.Who, tr.Fence}] = tr
	}
	log := r.Reg.Log()
	for _, w := range log {
		if w.Accepted {
			res.Writes++
			continue
		}
		res.Refused++
		if tr, ok := byID[id{w.Who, w.Fence}]; ok && w.T < tr.End {
			res.RefusedTrusted++
		}
	}
	res.Stale = len(CheckStaleWrites(log, r.N))
	return res
}

// Check stops the run's instances, measures it against e, fails the test
// where the measure breaks e, and returns the result with its verdict.
func (r *Run) Check(e Expect) Result {
	r.t.Helper()
	r.Stop()
	res := r.Measure()
	events := r.Events()
	most, at := MostTrusting(Trusts(events))
	var bad, caught []string
	over := most > r.N
	switch {
	case e.Broken && over:
		caught = append(caught, fmt.Sprintf("%d trusted at once", most))
	case over && !e.MoreThanN:
		bad = append(bad, fmt.Sprintf("%d holders trusted their permits at once, limit %d", most, r.N))
		for _, tr := range at {
			r.t.Logf("  %s fence %d trusted from %v to %v", tr.Who, tr.Fence, time.Duration(tr.Start), time.Duration(tr.End))
		}
	}
	stale := CheckStaleWrites(r.Reg.Log(), r.N)
	switch {
	case e.Broken && len(stale) > 0:
		caught = append(caught, "stale write accepted")
	case len(stale) > 0:
		bad = append(bad, fmt.Sprintf("%d stale writes accepted", len(stale)))
		for i, s := range stale {
			if i == 3 {
				break
			}
			r.t.Log(s)
		}
	}
	if e.Refused && res.Refused == 0 {
		bad = append(bad, "no stale write refused: the fault did not bite")
	}
	if res.Holds == 0 || res.Writes == 0 {
		bad = append(bad, "no permit was held and written under")
	}
	if e.Broken && len(caught) == 0 {
		bad = append(bad, "broken on purpose, yet nothing caught")
	}
	switch {
	case len(bad) > 0:
		res.Verdict = "FAIL: " + strings.Join(bad, ", ")
		r.t.Errorf("%s: %s", res, res.Verdict)
	case e.Broken:
		res.Verdict = "broken on purpose; caught: " + strings.Join(caught, ", ")
	case over:
		res.Verdict = "more than N, as documented; fence held"
	default:
		res.Verdict = "safe"
	}
	r.t.Logf("%s: %s", res, res.Verdict)
	return res
}

// Row is one line of a table of runs.
type Row struct {
	Scenario, Store string
	Result
}

// Table renders rows as Markdown, for N permits.
func Table(n int, rows []Row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| scenario (N = %d) | store | holds | most trusted at once | writes accepted | refused (of them, holder still trusting) | stale writes accepted | verdict |\n", n)
	b.WriteString("|---|---|--:|--:|--:|--:|--:|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d (%d) | %d | %s |\n",
			r.Scenario, r.Store, r.Holds, r.MostTrusted, r.Writes, r.Refused, r.RefusedTrusted, r.Stale, r.Verdict)
	}
	return b.String()
}
