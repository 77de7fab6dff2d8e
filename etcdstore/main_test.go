package etcdstore_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if eps := os.Getenv(workerEnv); eps != "" {
		// A holder process of the safety suite (see safety_test.go).
		os.Exit(runWorkerProcess(eps))
	}
	goleak.VerifyTestMain(m)
}
