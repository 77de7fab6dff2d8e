package redlock

import (
	"errors"
	"testing"

	"github.com/reqlock/reqlock/core/store"
)

// TestLateGrantsTakeBack walks one slow node through the orders in which
// its acquire and release answers can come in, and checks that the lock is
// asked back on it exactly when the node may still hold it. Two other nodes
// answered the acquire at once, and a fourth is slower still, so the lease
// stays tracked throughout. Events: R the release is sent; g the node
// granted, n it refused or failed; d its release deleted the lock, x found
// nothing, e failed.
func TestLateGrantsTakeBack(t *testing.T) {
	cases := []struct {
		events string
		want   int // index of the event that must report takeBack; -1: none
	}{
		{"gRd", -1}, // the common case: the release deletes the grant
		{"Rgd", -1}, // the grant answered late, but ran before the release
		{"Rxg", 2},  // the release ran first, then the grant landed
		{"Rgx", 2},  // the same, answers the other way round
		{"gRx", -1}, // an early grant the release did not find had expired
		{"Rnx", -1}, // refused, or no answer: nothing known to take back
		{"gRe", -1}, // an early grant whose release failed expires with its lease
		{"Reg", 2},  // the release failed and the grant surely came after it
		{"Rge", 2},  // the same, answers the other way round
	}
	for _, c := range cases {
		t.Run(c.events, func(t *testing.T) {
			var g lateGrants
			lg := g.track("k", "tok", 4)
			g.acquired(lg, 1, true)
			g.acquired(lg, 2, true)
			var rel *lateGrant
			for i, ev := range c.events {
				var got bool
				switch ev {
				case 'R':
					if rel = g.releasing("k", "tok"); rel != lg {
						t.Fatal("releasing: not tracked while a node is out")
					}
				case 'g', 'n':
					got = g.acquired(lg, 0, ev == 'g')
				case 'd':
					got = g.releasedOn(rel, 0, nil)
				case 'x':
					got = g.releasedOn(rel, 0, store.ErrNotHeld)
				case 'e':
					got = g.releasedOn(rel, 0, errors.New("node timeout"))
				}
				if want := i == c.want; got != want {
					t.Fatalf("event %d (%c): takeBack = %v, want %v", i, ev, got, want)
				}
			}
			g.releasedOn(rel, 1, nil)
			g.releasedOn(rel, 2, nil)
			if g.acquired(lg, 3, true) || g.releasedOn(rel, 3, nil) {
				t.Fatal("a grant the release deleted is taken back")
			}
			if len(g.byLease) != 0 {
				t.Fatal("still tracked after every answer")
			}
		})
	}
}

// TestLateGrantsForgetAnswered: once every node answered the acquire, a
// grant can no longer land late, so the lease is forgotten, also when the
// lock is never released (it expired, or the process moved on).
func TestLateGrantsForgetAnswered(t *testing.T) {
	var g lateGrants
	lg := g.track("k", "tok", 2)
	g.acquired(lg, 0, true)
	g.acquired(lg, 1, false)
	if len(g.byLease) != 0 {
		t.Fatal("still tracked")
	}
	if g.releasing("k", "tok") != nil {
		t.Fatal("a release after every answer is tracked")
	}
}

// TestLateGrantsSameTokenAgain: a caller of the Store that sends an acquire
// again with the same token and key while the first is still out gets the
// second tracked; the first one's answers neither disturb it nor make it
// forgotten early. The same token on another key is another lease.
func TestLateGrantsSameTokenAgain(t *testing.T) {
	var g lateGrants
	first := g.track("k", "tok", 2)
	other := g.track("k2", "tok", 2)
	second := g.track("k", "tok", 2)
	g.acquired(first, 0, true)
	g.acquired(first, 1, true) // the first is complete: must not drop the second
	if g.releasing("k", "tok") != second {
		t.Fatal("the second acquire is not the one tracked")
	}
	if g.releasing("k2", "tok") != other {
		t.Fatal("the same token on another key is not tracked on its own")
	}
}
