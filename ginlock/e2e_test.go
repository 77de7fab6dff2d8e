package ginlock_test

import (
	"testing"

	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/internal/httpcases/frameworks"
)

// auth stands in for auth and timeout middleware in the benchmarks' routers.
var auth = frameworks.GinAuth

func TestEndToEnd(t *testing.T) { httpcases.Run(t, frameworks.Gin) }

func TestTelemetry(t *testing.T) { httpcases.RunTelemetry(t, frameworks.Gin) }
