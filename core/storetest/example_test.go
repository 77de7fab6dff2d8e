package storetest_test

import (
	"fmt"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/storetest"
	"github.com/reqlock/reqlock/memorystore"
)

// A store's own test runs the whole contract with a few lines. Here the
// store is the memory store; a third-party store's test builds its
// Harness the same way, with its own constructor in New, and its hooks
// (Slow, Writes, Close) where it can give them.
func Example() {
	harness := storetest.Harness{
		New: func(testing.TB) core.Store { return memorystore.New() },
	}
	// In the store's package, conformance_test.go:
	//
	//	func TestConformance(t *testing.T) { storetest.Run(t, harness) }
	conformance := func(t *testing.T) { storetest.Run(t, harness) }
	_ = conformance

	// What the suite will check beyond core.Store, and its first promises.
	fmt.Println(storetest.Offers(harness.New(nil)))
	fmt.Println(storetest.Promises()[:3])
	// Output:
	// [Recorder RunMarker AcquireMarker UnitRecorder Waker Inspector Kinder Semaphores PermitLines]
	// [exclusion/store exclusion/locker exclusion/keys-independent]
}
