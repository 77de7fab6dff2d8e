package core_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/leadtest"
	"github.com/reqlock/reqlock/memorystore"
)

// leaderCost leads "job" with the leader's calls counted, with followers
// campaigning beside it, and returns the leader's store calls in window
// once it leads.
func leaderCost(t testing.TB, ttl, window time.Duration, followers int) (calls, extends int64) {
	s := memorystore.New()
	counted := &leadtest.Calls{Store: s}
	leader := leadLocker(counted, core.WithTTL(ttl))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	leading := make(chan struct{})
	wg.Go(func() {
		_ = leader.Lead(ctx, "job", func(ctx context.Context) error {
			close(leading)
			<-ctx.Done()
			return nil
		})
	})
	<-leading
	for range followers {
		f := leadLocker(s, core.WithTTL(ttl))
		wg.Go(func() {
			_ = f.Lead(ctx, "job", func(ctx context.Context) error {
				t.Error("a follower led while the leader was alive")
				return nil
			})
		})
	}
	c0, e0 := counted.Total(), counted.Extends.Load()
	time.Sleep(window)
	return counted.Total() - c0, counted.Extends.Load() - e0
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
