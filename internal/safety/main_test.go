package safety

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// silent drops go-redis's own log lines: the scenarios kill and stop
// servers on purpose, and every refused dial would be printed.
type silent struct{}

func (silent) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	redis.SetLogger(silent{})
	// A worker process is this test binary, started again with its
	// configuration in the environment: it runs the workload and exits
	// without running any test.
	if cfg := os.Getenv(workerEnv); cfg != "" {
		os.Exit(workerMain(cfg))
	}
	goleak.VerifyTestMain(m)
}
