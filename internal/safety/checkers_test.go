package safety

import (
	"bytes"
	"testing"
	"time"
)

// Each checker is run on a hand-made history that violates it, and on the
// same history put right: a checker that never fails proves nothing.

const ms = int64(time.Millisecond)

func ev(t int64, w string, k Kind, y Type, fence uint64) Event {
	return Event{T: t * ms, Worker: w, Kind: k, Type: y, Fence: fence}
}

// hold is an acquire at from, a release at to.
func hold(w string, fence uint64, from, to int64) []Event {
	return []Event{
		ev(from-1, w, Acquire, Invoke, 0), ev(from, w, Acquire, OK, fence),
		ev(to, w, Release, Invoke, 0), ev(to+1, w, Release, OK, 0),
	}
}

func history(parts ...[]Event) []Event {
	h := NewHistory(nil)
	for _, p := range parts {
		for _, e := range p {
			h.Add(e)
		}
	}
	return h.Events()
}

func TestCheckOverlapCatchesTwoHolders(t *testing.T) {
	bad := history(hold("a", 1, 10, 50), hold("b", 2, 40, 80))
	if got := CheckOverlap(Holds(bad)); Definite(got) != 1 {
		t.Fatalf("a [10,50] and b [40,80]: %v, want one overlap", got)
	}
	good := history(hold("a", 1, 10, 50), hold("b", 2, 50, 80), hold("a", 3, 81, 90))
	if got := CheckOverlap(Holds(good)); len(got) != 0 {
		t.Fatalf("back-to-back holds: %v, want none", got)
	}
}

// A hold ends when Lost() fires, even if Release comes much later.
func TestCheckOverlapEndsHoldAtLost(t *testing.T) {
	h := history(
		[]Event{ev(9, "a", Acquire, Invoke, 0), ev(10, "a", Acquire, OK, 1), ev(30, "a", LostSig, OK, 1),
			ev(70, "a", Release, Invoke, 0), ev(71, "a", Release, Fail, 0)},
		hold("b", 2, 40, 80))
	if got := CheckOverlap(Holds(h)); len(got) != 0 {
		t.Fatalf("a lost at 30, b from 40: %v, want none", got)
	}
}

// A holder that never finished (a process stopped for good) holds until the
// history ends.
func TestCheckOverlapOpenHoldLastsToTheEnd(t *testing.T) {
	h := history([]Event{ev(9, "a", Acquire, Invoke, 0), ev(10, "a", Acquire, OK, 1)}, hold("b", 2, 40, 80))
	if got := CheckOverlap(Holds(h)); Definite(got) != 1 {
		t.Fatalf("a never released, b from 40: %v, want one overlap", got)
	}
}

// An acquire whose outcome is unknown may hold the lock from its invoke
// until its lease ends.
func TestCheckOverlapUnknownAcquireIsPossiblyHeld(t *testing.T) {
	unknown := []Event{
		{T: 10 * ms, Worker: "a", Kind: Acquire, Type: Invoke, Lease: 100 * ms},
		ev(20, "a", Acquire, Unknown, 0),
	}
	got := CheckOverlap(Holds(history(unknown, hold("b", 2, 50, 60))))
	if len(got) != 1 || !got[0].Possible {
		t.Fatalf("unknown acquire at 10 (lease 100ms), b at 50: %v, want one possible overlap", got)
	}
	if got := CheckOverlap(Holds(history(unknown, hold("b", 2, 111, 120)))); len(got) != 0 {
		t.Fatalf("b after the unknown acquire's lease: %v, want none", got)
	}
}

func access(w string, write bool, fence uint64, base, value int64, ok bool) Access {
	return Access{Worker: w, Write: write, Fence: fence, Base: base, Value: value, Accepted: ok}
}

func TestCheckLostUpdatesCatchesOverwrite(t *testing.T) {
	bad := []Access{
		access("a", false, 1, 0, 0, true),
		access("b", false, 2, 0, 0, true),
		access("b", true, 2, 0, 1, true),
		access("a", true, 1, 0, 1, true), // a read 0 before b wrote: b's increment is lost
	}
	if got := CheckLostUpdates(bad); len(got) != 1 || got[0].Write.Worker != "a" {
		t.Fatalf("%v, want a's write as the one lost update", got)
	}
	bad[3].Accepted = false // a fenced account refuses it
	if got := CheckLostUpdates(bad); len(got) != 0 {
		t.Fatalf("with the stale write refused: %v, want none", got)
	}
}

func TestCheckStaleWritesCatchesLowerFence(t *testing.T) {
	bad := []Access{
		access("a", false, 1, 0, 0, true),
		access("b", false, 2, 0, 0, true),
		access("a", true, 1, 0, 1, true), // fence 1 after fence 2 was seen
	}
	if got := CheckStaleWrites(bad); len(got) != 1 || got[0].Highest != 2 {
		t.Fatalf("%v, want one stale write below 2", got)
	}
	bad[2].Accepted = false
	if got := CheckStaleWrites(bad); len(got) != 0 || Refused(bad) != 1 {
		t.Fatalf("refused: %v (refused %d), want none accepted, one refused", got, Refused(bad))
	}
}

func TestCheckStaleWritesCatchesRepeatedFence(t *testing.T) {
	bad := []Access{access("a", true, 5, 0, 1, true), access("b", true, 5, 1, 2, true)}
	if got := CheckStaleWrites(bad); len(got) != 1 {
		t.Fatalf("two writes under fence 5: %v, want one stale", got)
	}
}

func TestCheckLostLatencyCatchesLateSignal(t *testing.T) {
	lostAt := func(at int64) []Event {
		return []Event{ev(9, "a", Acquire, Invoke, 0), ev(10, "a", Acquire, OK, 1), ev(at, "a", LostSig, OK, 1)}
	}
	late := history(lostAt(60), hold("b", 2, 50, 80))
	if got := CheckLostLatency(Holds(late)); len(got) != 1 || got[0].Late() != 10*time.Millisecond {
		t.Fatalf("lost at 60, b acquired at 50: %v, want 10ms late", got)
	}
	if lead, ok := LostLead(Holds(late)); !ok || lead != -10*time.Millisecond {
		t.Fatalf("lead %v %v, want -10ms", lead, ok)
	}
	onTime := history(lostAt(45), hold("b", 2, 50, 80))
	if got := CheckLostLatency(Holds(onTime)); len(got) != 0 {
		t.Fatalf("lost at 45, b at 50: %v, want none", got)
	}
	if lead, ok := LostLead(Holds(onTime)); !ok || lead != 5*time.Millisecond {
		t.Fatalf("lead %v %v, want 5ms", lead, ok)
	}
}

// Events written to a sink come back the same: worker processes report
// that way.
func TestHistorySinkRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	h := NewHistory(&buf)
	want := h.Add(Event{Worker: "p1", Kind: Acquire, Type: OK, Fence: 7})
	got, err := ReadEvents(buf.String())
	if err != nil || len(got) != 1 || got[0] != want {
		t.Fatalf("%v %v, want [%v]", got, err, want)
	}
}

func TestRefusedReadsCountsOnlyReads(t *testing.T) {
	log := []Access{access("a", false, 5, 0, 0, true), access("b", false, 3, 0, 0, false), access("b", true, 3, 0, 1, false)}
	if n := RefusedReads(log); n != 1 {
		t.Fatalf("RefusedReads = %d, want 1 (the read under fence 3)", n)
	}
}
