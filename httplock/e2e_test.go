package httplock_test

import (
	"testing"

	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/internal/httpcases/frameworks"
)

func TestEndToEnd(t *testing.T) { httpcases.Run(t, frameworks.NetHTTP) }

func TestTelemetry(t *testing.T) { httpcases.RunTelemetry(t, frameworks.NetHTTP) }

// chi runs the same cases, with the middleware in r.With, where chi has
// routed the request.
func TestEndToEndChi(t *testing.T) { httpcases.Run(t, frameworks.Chi) }
