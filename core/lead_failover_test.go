package core_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/leadtest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore"
)

// leadHandOver bounds the time from a leader's fault to the next leader's
// first act: one lease (the fallen leader's, renewed a moment before) and
// one hand-off, with room for a loaded 2-core machine under -race.
func leadHandOver(ttl time.Duration) time.Duration {
	return ttl + store.HandOffTimeout + 750*time.Millisecond
}

// Three instances lead one key on one store; the leader is stopped and
// later another is killed. At every moment at most one of them acts as
// leader, each term is greater than the last, a new leader acts within a
// lease and a hand-off of the fault, and the register, which checks terms,
// takes no write from a term that was over.
func TestLeadFailover(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		// One process: each instance's link to the store is stalled or cut
		// instead (leadtest.Gate); a stalled leader's fn runs on, and must
		// stop acting when its lease runs out by its own clock.
		const ttl = 600 * time.Millisecond
		r := leadtest.NewRun(t, ttl)
		s := memorystore.New()
		var insts []leadtest.Instance
		for _, n := range []string{"a", "b", "c"} {
			insts = append(insts, r.StartLocal(n, s))
		}
		r.Drive(insts, leadtest.Pause, leadtest.Kill)
		r.Check(leadHandOver(ttl))
	})
	t.Run("redis", func(t *testing.T) {
		if leadtest.Child(redisChild) {
			return
		}
		// Three processes: the leader is sent SIGSTOP for two leases, then
		// the next one SIGKILL.
		const ttl = time.Second
		srv := redistest.Start(t)
		r := leadtest.NewRun(t, ttl)
		var insts []leadtest.Instance
		for _, n := range []string{"a", "b", "c"} {
			insts = append(insts, r.Spawn(n, []string{srv.Addr}))
		}
		r.Drive(insts, leadtest.Pause, leadtest.Kill)
		r.Check(leadHandOver(ttl))
	})
}

// redisChild is the store of a child instance: Redis at addrs[0].
func redisChild(addrs []string) (core.Store, func()) {
	c := redis.NewClient(redistest.ClientOptions(addrs[0]))
	return redisstore.New(c), func() { c.Close() }
}
