package core_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/lockertest"
)

// The Locker's behaviour on the memory store (each store package runs the
// same on its own stores): exclusion, conflicts, stale holders, the
// watchdog, waiting and waking, lines, Once.
func TestLocker(t *testing.T) { lockertest.Run(t, lockertest.Memory()) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// newLocker is a Locker on s that logs nothing (lockertest.NewLocker: in
// the labelled runs of lockertest.Each, labelled).
func newLocker(s core.Store, opts ...core.Option) *core.Locker {
	return lockertest.NewLocker(s, opts...)
}

func ctxT(t *testing.T, d time.Duration) context.Context { return lockertest.Context(t, d) }
