package core_test

import (
	"context"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/benchratio"
	"github.com/reqlock/reqlock/internal/redistest"
)

// BenchmarkClusterCycle: one uncontended TryObtain + Release through a
// cluster client on a three-master Redis Cluster, beside the single-node
// floor: a bare SET NX PX and the release script on one plain node (and
// the scripted floor, the same with SET NX PX inside a script). There is
// no interleaved ratio line: the floors and reqlock run on different server
// processes, and timing them in turn would leave the cluster's idle, and
// cold, for two thirds of the loop.
func BenchmarkClusterCycle(b *testing.B) {
	ctx := context.Background()
	single := redistest.Start(b).Client(b)
	cc := redistest.StartCluster(b, 3).Client(b)
	l := newLocker(core.NewRedisStore(cc))
	single.Ping(ctx)
	if lk, err := l.TryObtain(ctx, "k"); err == nil { // learn the slot map outside the timings
		lk.Release(ctx)
	}

	benchratio.Each(b, "", func(b *testing.B) []benchratio.Cycle { return cycles(ctx, b, single, l, "k") })
}
