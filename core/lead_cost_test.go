package core_test

import (
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/leadtest"
	"github.com/reqlock/reqlock/memorystore"
)

// leaderCost is the leader's store calls, and renewals among them, in
// window on the memory store, with followers campaigning beside it.
func leaderCost(t testing.TB, ttl, window time.Duration, followers int) (calls, extends int64) {
	s := memorystore.New()
	return leadtest.Cost(t, s, func() core.Store { return s }, "job", ttl, window, followers)
}

// A leader's steady state is one renewal per third of its lease, and
// nothing else, however many followers campaign: they wait on the store,
// not on the leader.
func TestLeaderSteadyStateIsOneRenewalPerThirdOfTheLease(t *testing.T) {
	const ttl, window = 300 * time.Millisecond, 3 * time.Second
	want := int64(window / (ttl / 3)) // 30
	for _, followers := range []int{0, 4} {
		calls, extends := leaderCost(t, ttl, window, followers)
		t.Logf("%d followers: the leader made %d store calls in %v, %d of them renewals (one per TTL/3: %d)", followers, calls, window, extends, want)
		if extends < want*8/10 || extends > want*12/10 {
			t.Errorf("%d followers: %d renewals in %v, want about %d", followers, extends, window, want)
		}
		if calls != extends {
			t.Errorf("%d followers: %d store calls besides the renewals", followers, calls-extends)
		}
	}
}
