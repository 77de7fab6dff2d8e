package core_test

import (
	"testing"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/retrycases"
	"github.com/reqlock/reqlock/memorystore"
)

// The retry policy is the schedule on every store, with wake-ups or
// without: Limit gives up after its count of waits, and a constant
// policy's attempts come as far apart as it says; waiters that poll
// eagerly keep their places in line (package retrycases).
// Redis, Redlock, PostgreSQL and etcd run the same cases in their own
// packages.
func TestRetryPolicyIsTheSchedule(t *testing.T) {
	memory := func(*testing.T) store.Store { return memorystore.New() }
	t.Run("memory", func(t *testing.T) {
		retrycases.Run(t, memory)
		retrycases.RunLine(t, memory)
	})
}
