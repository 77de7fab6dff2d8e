package safety

import (
	"strings"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore"
)

// effectRuns is how many paused holders each column measures, at once.
const effectRuns = 10

// effectsRows are the rows of the effects table, under table.mu.
var effectsRows [][4]string

// pausedAfterEffect measures, on s, both policies: with RunAgain the
// duplicate runs again (at least once: the fault is real), with
// RefuseInDoubt it is refused and no second effect is committed.
func pausedAfterEffect(t *testing.T, store string, s core.Store) {
	const lease = 200 * time.Millisecond
	cols := [4]string{store, "", "", "—"}
	for i, policy := range []core.DoubtPolicy{core.RunAgain, core.RefuseInDoubt} {
		holder := core.NewLocker(s, core.WithTTL(lease), core.WithoutWatchdog(), core.WithLogger(quiet), core.WithDoubtPolicy(policy))
		dup := core.NewLocker(s, core.WithRetry(fastRetry), core.WithLogger(quiet), core.WithDoubtPolicy(policy))
		got := PausedAfterEffect(holder, dup, lease, effectRuns, MemoryEffects())
		cols[1+i] = got.String()
		switch {
		case len(got.Errors) > 0:
			t.Errorf("%v: %s", policy, strings.Join(got.Errors, "; "))
		case policy == core.RunAgain && got.Second != got.Runs:
			t.Errorf("RunAgain: %v; want a second effect in every run (the pause is past the lease)", got)
		case policy == core.RefuseInDoubt && (got.Second != 0 || got.Refused != got.Runs):
			t.Errorf("RefuseInDoubt: %v; want every duplicate refused and no second effect", got)
		}
	}
	table.mu.Lock()
	effectsRows = append(effectsRows, cols)
	table.mu.Unlock()
}

func effectsMemory(t *testing.T) { pausedAfterEffect(t, "memory", memorystore.New()) }

func effectsRedis(t *testing.T) {
	srv := redistest.Start(t)
	pausedAfterEffect(t, "redis", redisstore.New(client(t, srv.Addr)))
}
