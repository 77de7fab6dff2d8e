package leadtest

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// synthetic is a run with the given events and register writes.
func synthetic(t *testing.T, events []Event, writes ...uint64) *Run {
	r := NewRun(t, time.Second)
	for _, e := range events {
		r.Add(e)
	}
	for _, w := range writes {
		_ = r.Reg.Write(context.Background(), "x", w)
	}
	return r
}

func TestMeasureCountsOverlappingTerms(t *testing.T) {
	r := synthetic(t, []Event{
		{T: 10, Who: "a", Kind: Begin, Term: 5},
		{T: 11, Who: "a", Kind: Act, Term: 5},
		{T: 20, Who: "b", Kind: Begin, Term: 7},
		{T: 21, Who: "b", Kind: Act, Term: 7},
		{T: 22, Who: "a", Kind: Act, Term: 5}, // a acts after b did
	})
	if got := r.Measure(); got.Overlaps != 1 {
		t.Fatalf("overlaps = %d, want 1", got.Overlaps)
	}
}

func TestMeasureCountsTermsThatGoBackwards(t *testing.T) {
	r := synthetic(t, []Event{
		{T: 10, Who: "a", Kind: Begin, Term: 7},
		{T: 20, Who: "b", Kind: Begin, Term: 5},
	})
	if got := r.Measure(); got.Backwards != 1 {
		t.Fatalf("backwards = %d, want 1", got.Backwards)
	}
}

func TestRegisterRefusesStaleTerms(t *testing.T) {
	r := synthetic(t, nil, 5, 7, 5, 7, 9)
	got := r.Measure()
	if got.Writes != 4 || got.Refused != 1 || got.Stale != 0 {
		t.Fatalf("writes %d refused %d stale %d, want 4, 1, 0", got.Writes, got.Refused, got.Stale)
	}
}

func TestMeasureTimesTheHandOver(t *testing.T) {
	r := synthetic(t, []Event{
		{T: 10, Who: "a", Kind: Begin, Term: 5},
		{T: 11, Who: "a", Kind: Act, Term: 5},
		{T: 500, Who: "b", Kind: Begin, Term: 7},
		{T: 600, Who: "b", Kind: Act, Term: 7},
	})
	r.faults = append(r.faults, applied{Fault: Kill, T: 100, Who: "a", Term: 5})
	if got := r.Measure(); len(got.HandOvers) != 1 || got.HandOvers[0] != 500 {
		t.Fatalf("hand-overs = %v, want [500ns]", got.HandOvers)
	}
}
