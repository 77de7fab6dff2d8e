package storetest_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(brokenEnv) != "" {
		// A child run of the suite against a broken store: its failures
		// are the point, and its leaks are the broken store's.
		os.Exit(m.Run())
	}
	goleak.VerifyTestMain(m)
}
