package redisstore_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/benchratio"
	"github.com/reqlock/reqlock/internal/cyclebench"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// BenchmarkClusterCycle: one uncontended TryObtain + Release through a
// cluster client on a three-master Redis Cluster, beside the single-node
// floor: a bare SET NX PX and the release script through a plain client
// (and the scripted floor, the same with SET NX PX inside a script).
//
// The ratio line times the three in turn with the floors sent, through a
// plain client, to the master that serves the lock: one server process
// for all three, as in BenchmarkCycle, so that none of them finds its
// server idle, and slower to wake, more often than the others. The floors
// there run on a server in cluster mode, which costs it a little more than
// a standalone one. The lines run one after another compare with a
// standalone server instead.
func BenchmarkClusterCycle(b *testing.B) {
	ctx := context.Background()
	single := redistest.Start(b).Client(b)
	cl := redistest.StartCluster(b, 3)
	cc := cl.Client(b)
	l := newLocker(redisstore.New(cc))
	single.Ping(ctx)
	if lk, err := l.TryObtain(ctx, "k"); err == nil { // learn the slot map outside the timings
		lk.Release(ctx)
	}

	benchratio.Each(b, "", func(b *testing.B) []benchratio.Cycle { return cyclebench.Cycles(ctx, b, single, l, "k") })
	b.Run("ratio", func(b *testing.B) {
		benchratio.Ratios(b, cyclebench.Cycles(ctx, b, lockOwner(b, cl, l, "k"), l, "k")...)
	})
}

// lockOwner is a plain client for the master that serves id's lock.
func lockOwner(b *testing.B, cl *redistest.Cluster, l *core.Locker, id string) *redis.Client {
	key, err := l.StoreKey(id)
	if err != nil {
		b.Fatal(err)
	}
	_, owner := cl.KeyOwner(b, key)
	return owner.Client(b)
}
