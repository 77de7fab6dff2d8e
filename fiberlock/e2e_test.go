package fiberlock_test

import (
	"testing"

	"github.com/reqlock/reqlock/internal/httpcases"
)

// The shared end-to-end cases, on a Fiber app served on loopback, against
// every store.
func TestEndToEnd(t *testing.T) { httpcases.Run(t, fiberFramework) }

func TestTelemetry(t *testing.T) { httpcases.RunTelemetry(t, fiberFramework) }
