package redisstore_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(permitWorkerEnv); spec != "" {
		// A permit holder in a process of its own (semaphore_pause_test.go).
		os.Exit(permitWorker(spec))
	}
	goleak.VerifyTestMain(m)
}
