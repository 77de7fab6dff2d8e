package permittest

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Four holders of three permits, by hand: a, b and c trust theirs, and d
// is granted while c's validity has not run out by c's own clock.
func TestMostTrustingCountsValidityByTheHoldersClock(t *testing.T) {
	events := []Event{
		{T: 10, Who: "a", Kind: Acquire, Fence: 1, Until: 1000},
		{T: 11, Who: "b", Kind: Acquire, Fence: 2, Until: 1000},
		{T: 12, Who: "c", Kind: Acquire, Fence: 3, Until: 60},
		{T: 50, Who: "d", Kind: Acquire, Fence: 4, Until: 1000},
		{T: 70, Who: "a", Kind: Release, Fence: 1},
	}
	if n, at := MostTrusting(Trusts(events)); n != 4 || len(at) != 4 {
		t.Fatalf("most trusting = %d (%v), want 4", n, at)
	}
	// c's validity ran out before d was granted: three at most.
	events[2].Until = 50
	if n, _ := MostTrusting(Trusts(events)); n != 3 {
		t.Fatalf("most trusting = %d, want 3 once c's validity ends as d begins", n)
	}
}

// Lost() and Release end a holder's trust, whichever comes first.
func TestTrustEndsAtLostOrRelease(t *testing.T) {
	events := []Event{
		{T: 10, Who: "a", Kind: Acquire, Fence: 1, Until: 1000},
		{T: 20, Who: "a", Kind: Lost, Fence: 1},
		{T: 30, Who: "b", Kind: Acquire, Fence: 2, Until: 1000},
		{T: 40, Who: "b", Kind: Release, Fence: 2},
		{T: 90, Who: "a", Kind: Release, Fence: 1},
		{T: 5, Who: "c", Kind: Acquire, Fence: 3, Until: 4}, // came back after its validity
	}
	got := Trusts(events)
	want := []Trust{{"a", 1, 10, 20}, {"b", 2, 30, 40}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("trusts = %v, want %v", got, want)
	}
	if n, _ := MostTrusting(got); n != 1 {
		t.Fatalf("most trusting = %d, want 1", n)
	}
}

// The register refuses a fence below the N highest it accepted, and the
// checker finds the same write when an unfenced register took it.
func TestRegisterAndCheckerAgree(t *testing.T) {
	ctx := context.Background()
	for _, fenced := range []bool{true, false} {
		r := NewRegister(3)
		if !fenced {
			r.Unfenced()
		}
		// 5 again while three are known: taken; 6 after 8: still among
		// 6, 7, 8. After 9, 5 is below the lowest of 7, 8, 9.
		for _, f := range []uint64{5, 6, 7, 5, 8, 6, 9} {
			if err := r.Write(ctx, "w", f); err != nil {
				t.Fatalf("fenced %v, fence %d: %v", fenced, f, err)
			}
		}
		err := r.Write(ctx, "late", 5)
		stale := CheckStaleWrites(r.Log(), 3)
		switch {
		case fenced && !errors.Is(err, ErrStale):
			t.Fatalf("fenced: a write with fence 5 after 6, 7, 8 and 9 answered %v, want ErrStale", err)
		case fenced && len(stale) != 0:
			t.Fatalf("fenced: the checker found %v", stale)
		case !fenced && (err != nil || len(stale) != 1 || stale[0].Write.Who != "late" || stale[0].Lowest != 7):
			t.Fatalf("unfenced: write answered %v, checker found %v; want the late write, below 7", err, stale)
		}
	}
}

// An honest holder overtaken by N newer permits is refused too: the price
// of a check that knows only fences.
func TestRegisterRefusesAHolderOvertakenByNNewer(t *testing.T) {
	ctx := context.Background()
	r := NewRegister(2)
	for _, f := range []uint64{1, 2, 3} {
		if err := r.Write(ctx, "w", f); err != nil {
			t.Fatalf("fence %d: %v", f, err)
		}
	}
	if err := r.Write(ctx, "w", 1); !errors.Is(err, ErrStale) {
		t.Fatalf("fence 1 after 2 and 3 with N = 2: %v, want ErrStale", err)
	}
}

// Check fails a run that breaks the promise, and counts a broken setup's
// faults as caught.
func TestCheckJudges(t *testing.T) {
	run := func(e Expect, events []Event, writes ...uint64) (Result, bool) {
		ft := &fakeT{TB: t}
		r := &Run{t: ft, N: 2, TTL: time.Second, Reg: NewRegister(2).Unfenced(), next: map[string]chan struct{}{}}
		for _, ev := range events {
			r.Add(ev)
		}
		for _, f := range writes {
			_ = r.Reg.Write(context.Background(), "w", f)
		}
		return r.Check(e), ft.failed
	}
	three := []Event{
		{T: 10, Who: "a", Kind: Acquire, Fence: 1, Until: 100},
		{T: 11, Who: "b", Kind: Acquire, Fence: 2, Until: 100},
		{T: 12, Who: "c", Kind: Acquire, Fence: 3, Until: 100},
	}
	if res, failed := run(Expect{}, three, 1, 2, 3); !failed || res.MostTrusted != 3 {
		t.Fatalf("three holders of two permits: failed %v, %s", failed, res)
	}
	if res, failed := run(Expect{MoreThanN: true}, three, 1, 2, 3); failed {
		t.Fatalf("three holders where the docs allow more than N: %s", res.Verdict)
	}
	if res, failed := run(Expect{}, three[:2], 2, 3, 1); !failed || res.Stale != 1 {
		t.Fatalf("a write below the two highest fences: failed %v, %s", failed, res)
	}
	if res, failed := run(Expect{Broken: true}, three, 2, 3, 1); failed || res.Verdict != "broken on purpose; caught: 3 trusted at once, stale write accepted" {
		t.Fatalf("broken on purpose: failed %v, verdict %q", failed, res.Verdict)
	}
	if res, failed := run(Expect{Broken: true}, three[:2], 1, 2); !failed {
		t.Fatalf("broken on purpose with nothing to catch passed: %q", res.Verdict)
	}
}

// fakeT records failures instead of failing the test.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) Helper()               {}
func (f *fakeT) Logf(string, ...any)   {}
func (f *fakeT) Log(...any)            {}
