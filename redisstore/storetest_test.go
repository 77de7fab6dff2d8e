package redisstore_test

import (
	"testing"

	"github.com/reqlock/reqlock/core/storetest"
	"github.com/reqlock/reqlock/internal/redisharness"
)

// The whole contract on one server, a Cluster and a Sentinel set, each with
// late landings through the fault proxy.
func TestConformance(t *testing.T) {
	t.Run("single", func(t *testing.T) { storetest.Run(t, redisharness.Single()) })
	t.Run("cluster", func(t *testing.T) { storetest.Run(t, redisharness.Cluster(t)) })
	t.Run("sentinel", func(t *testing.T) { storetest.Run(t, redisharness.Sentinel(t)) })
}
