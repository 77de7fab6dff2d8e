package core_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(handOffWorkerEnv); spec != "" {
		os.Exit(handOffWorker(spec))
	}
	goleak.VerifyTestMain(m)
}
