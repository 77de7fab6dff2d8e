package memorystore_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// newLocker is a Locker on s whose log stays out of the test output.
func newLocker(s core.Store, opts ...core.Option) *core.Locker {
	return core.NewLocker(s, append([]core.Option{core.WithLogger(quiet)}, opts...)...)
}

// ctxT is a context that ends after d, or with the test.
func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
