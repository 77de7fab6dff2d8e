package core_test

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/internal/retrycases"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore"
	"github.com/reqlock/reqlock/redisstore/redlock"
)

// The retry policy is the schedule on every store, with wake-ups or
// without: Limit gives up after its count of waits, and a constant
// policy's attempts come as far apart as it says; waiters that poll
// eagerly keep their places in line (package retrycases).
// PostgreSQL and etcd run the same cases in their own modules.
func TestRetryPolicyIsTheSchedule(t *testing.T) {
	memory := func(*testing.T) store.Store { return memorystore.New() }
	redisStore := func(t *testing.T) store.Store { return redisstore.New(redistest.Start(t).Client(t)) }
	t.Run("memory", func(t *testing.T) {
		retrycases.Run(t, memory)
		retrycases.RunLine(t, memory)
	})
	t.Run("redis", func(t *testing.T) {
		retrycases.Run(t, redisStore)
		retrycases.RunLine(t, redisStore)
	})
	t.Run("redlock", func(t *testing.T) {
		retrycases.Run(t, func(t *testing.T) store.Store {
			var nodes []redis.UniversalClient
			for range 3 {
				nodes = append(nodes, redistest.Start(t).Client(t))
			}
			return redlock.New(nodes...)
		})
	})
}
