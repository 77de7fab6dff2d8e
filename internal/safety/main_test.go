package safety

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// A worker process is this test binary, started again with its
	// configuration in the environment: it runs the workload and exits
	// without running any test.
	if cfg := os.Getenv(workerEnv); cfg != "" {
		os.Exit(workerMain(cfg))
	}
	goleak.VerifyTestMain(m)
}
