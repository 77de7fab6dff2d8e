package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/lockertest"
)

// The Locker's behaviour on one server and on a Cluster, as core checks it
// on the memory store.
func TestLocker(t *testing.T) { lockertest.Run(t, lockertest.Redis(), lockertest.Cluster()) }

// newLocker is a Locker on s that logs nothing.
func newLocker(s core.Store, opts ...core.Option) *core.Locker {
	return lockertest.NewLocker(s, opts...)
}

func ctxT(t *testing.T, d time.Duration) context.Context { return lockertest.Context(t, d) }
