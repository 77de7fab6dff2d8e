package core

import (
	"errors"
	"testing"
)

// TestLateGrantsTakeBack walks one slow node through the orders in which
// its acquire and release answers can come in, and checks that the lock is
// asked back on it exactly when the node may still hold it. Two other nodes
// answered the acquire at once, and a fourth is slower still, so the token
// stays tracked throughout. Events: R the release starts; g the node
// granted, n it refused; d its release deleted the lock, x found nothing,
// e failed.
func TestLateGrantsTakeBack(t *testing.T) {
	cases := []struct {
		events string
		want   int // index of the event that must report takeBack; -1: none
	}{
		{"gRd", -1}, // the common case: the release deletes the grant
		{"Rgd", -1}, // the grant came late, but ran before the release
		{"Rxg", 2},  // the release ran first, then the grant landed
		{"Rgx", 2},  // the same, answers the other way round
		{"Rnx", -1}, // refused: nothing to take back
		{"gRe", -1}, // an early grant whose release failed expires with its lease
		{"Reg", 2},  // the release failed and the grant surely came after it
		{"Rge", 2},  // the same, answers the other way round
	}
	for _, c := range cases {
		t.Run(c.events, func(t *testing.T) {
			var g lateGrants
			g.track("tok", 4)
			g.acquired("tok", 1, true)
			g.acquired("tok", 2, true)
			for i, ev := range c.events {
				var got bool
				switch ev {
				case 'R':
					if !g.releasing("tok") {
						t.Fatal("releasing: not tracked while a node is out")
					}
				case 'g', 'n':
					got = g.acquired("tok", 0, ev == 'g')
				case 'd':
					got = g.releasedOn("tok", 0, nil)
				case 'x':
					got = g.releasedOn("tok", 0, ErrNotHeld)
				case 'e':
					got = g.releasedOn("tok", 0, errors.New("node timeout"))
				}
				if want := i == c.want; got != want {
					t.Fatalf("event %d (%c): takeBack = %v, want %v", i, ev, got, want)
				}
			}
			g.releasedOn("tok", 1, nil)
			g.releasedOn("tok", 2, nil)
			g.acquired("tok", 3, true)
			g.releasedOn("tok", 3, nil)
			if len(g.byToken) != 0 {
				t.Fatal("still tracked after every answer")
			}
		})
	}
}

// TestLateGrantsForgetAnswered: once every node answered the acquire, a
// grant can no longer land late, so the token is forgotten, also when the
// lock is never released (it expired, or the process moved on).
func TestLateGrantsForgetAnswered(t *testing.T) {
	var g lateGrants
	g.track("tok", 2)
	g.acquired("tok", 0, true)
	g.acquired("tok", 1, false)
	if len(g.byToken) != 0 {
		t.Fatal("still tracked")
	}
	if g.releasing("tok") {
		t.Fatal("a release after every answer is tracked")
	}
	if g.releasedOn("tok", 0, ErrNotHeld) {
		t.Fatal("an untracked release asks for a take-back")
	}
}
