package etcdstore_test

import (
	"os"
	"testing"

	"github.com/reqlock/reqlock/internal/etcdtest"
	"github.com/reqlock/reqlock/internal/leadtest"
	"github.com/reqlock/reqlock/internal/permittest"
	"go.uber.org/goleak"
)

// exampleEndpoints is the member the examples use, started by TestMain.
var exampleEndpoints []string

func TestMain(m *testing.M) {
	if eps := os.Getenv(workerEnv); eps != "" {
		// A holder process of the safety suite (see safety_test.go).
		os.Exit(runWorkerProcess(eps))
	}
	if permittest.Child(semChildStore) {
		// A holder process of the semaphore's rows (safety_semaphore_test.go).
		os.Exit(0)
	}
	if leadtest.IsChild() {
		// An instance of lead_test.go: it needs no member of its own.
		os.Exit(m.Run())
	}
	mt := &etcdtest.Main{}
	exampleEndpoints = etcdtest.Start(mt).Endpoints()
	goleak.VerifyTestMain(m,
		// The examples' member runs until after the check; its process's
		// waiter is the one goroutine left.
		goleak.IgnoreAnyFunction("github.com/reqlock/reqlock/internal/etcdtest.(*Member).start.func1"),
		goleak.Cleanup(func(int) { mt.Done() }))
}
