package redlock_test

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/internal/retrycases"
	"github.com/reqlock/reqlock/redisstore/redlock"
)

// The retry policy is the schedule on Redlock, which keeps no line:
// Limit gives up after its count of waits and a constant policy's attempts
// come as far apart as it says (package retrycases).
func TestRetryPolicyIsTheSchedule(t *testing.T) {
	retrycases.Run(t, func(t *testing.T) store.Store {
		var nodes []redis.UniversalClient
		for range 3 {
			nodes = append(nodes, redistest.Start(t).Client(t))
		}
		return redlock.New(nodes...)
	})
}
