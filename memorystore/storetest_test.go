package memorystore_test

import (
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/storetest"
	"github.com/reqlock/reqlock/memorystore"
)

// The memory store keeps the whole contract; nothing it answers can land
// late, so there is no Slow hook.
func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New: func(testing.TB) core.Store { return memorystore.New() },
	})
}
