package memorystore_test

import (
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/storetest"
	"github.com/reqlock/reqlock/memorystore"
)

// With units on, the memory store keeps the whole contract too, units
// included (the plain run skips them).
func TestConformanceWithUnits(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New: func(testing.TB) core.Store { return memorystore.New().WithUnits() },
	})
}
