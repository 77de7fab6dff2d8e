package echolock_test

import (
	"testing"

	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/internal/httpcases/frameworks"
)

// auth stands in for auth and timeout middleware in the benchmarks' routers.
var auth = frameworks.EchoAuth

func TestEndToEnd(t *testing.T) { httpcases.Run(t, frameworks.Echo) }

func TestTelemetry(t *testing.T) { httpcases.RunTelemetry(t, frameworks.Echo) }
