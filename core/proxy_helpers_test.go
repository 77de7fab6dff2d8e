package core_test

import (
	"testing"
	"time"

	"github.com/reqlock/reqlock/internal/faultproxy"
)

// waitCaptured waits, up to 5s, for h to hold a command: what names it in
// the failure.
func waitCaptured(t *testing.T, h *faultproxy.Held, what string) {
	t.Helper()
	select {
	case <-h.Captured():
	case <-time.After(5 * time.Second):
		t.Fatalf("no %s was held", what)
	}
}
