package safety

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
)

// Redis Cluster and Sentinel.

const topologyTTL = time.Second

func clusterClient(t *testing.T, c *redistest.Cluster) *redis.ClusterClient {
	cc := redis.NewClusterClient(redistest.ClusterOptions(c.Addrs))
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// clustered starts a 3-master Cluster and two workers, g1 holding for
// three leases at a time.
func clustered(t *testing.T) (*run, *redistest.Cluster, *Worker, int, *redistest.Server) {
	c := redistest.StartCluster(t, 3)
	r := newRun(t, true)
	a := r.worker(locker(core.NewRedisStore(clusterClient(t, c)), topologyTTL), longHold(topologyTTL))
	r.worker(locker(core.NewRedisStore(clusterClient(t, c)), topologyTTL), RandomPause(2*time.Millisecond))
	skey, err := a.Locker.StoreKey(r.key)
	if err != nil {
		t.Fatal(err)
	}
	slot, owner := c.KeyOwner(t, skey)
	r.start()
	return r, c, a, slot, owner
}

// The master that serves the lock stopped for 1.5 leases (well inside the
// cluster's node timeout, so no failover): as a single node, the holder
// loses the lock by its own clock first.
func clusterMasterPaused(t *testing.T) {
	r, _, a, _, owner := clustered(t)
	r.faultsUntilDone(func() {
		if r.heldBy(a) {
			time.Sleep(10 * time.Millisecond)
			owner.Pause()
			time.Sleep(topologyTTL * 3 / 2)
			owner.Resume()
		}
	})
	r.finish("the lock's master SIGSTOPped for 1.5 leases", "cluster (3 masters)", safe)
}

// The lock's slot moves to another master while g1 holds the lock, and
// back: the lock and its fence counter move with it.
func clusterSlotMoved(t *testing.T) {
	r, c, a, slot, owner := clustered(t)
	r.faultsUntilDone(func() {
		if !r.heldBy(a) {
			return
		}
		time.Sleep(10 * time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cur, err := c.Owner(ctx, slot)
		if err != nil {
			t.Fatal(err)
		}
		to := c.Others(cur)[0]
		if cur != owner {
			to = owner
		}
		c.MoveSlot(t, slot, to)
		time.Sleep(topologyTTL)
	})
	r.finish("the lock's slot moved while held", "cluster (3 masters)", safe)
}

// sentinelFailover fails the master over while g1 holds the lock. The docs
// allow two holders either way: clients that have not heard of the switch
// renew on the old master until the sentinels demote it, and renewals are
// not acked. With replica acks every lock was on the replica before anyone
// relied on it, and the docs promise the fence; without them they promise
// neither. Whether the overlap shows depends on when the clients hear of
// the switch: some runs show it, some do not.
func sentinelFailover(t *testing.T, acks bool) {
	sn := redistest.StartSentinel(t)
	r := newRun(t, true)
	store := func() core.Store {
		s := core.NewRedisStore(sn.Client(t))
		if acks {
			s = s.WithReplicaAcks(1, 50*time.Millisecond)
		}
		return s
	}
	a := r.worker(locker(store(), topologyTTL), longHold(topologyTTL))
	r.worker(locker(store(), topologyTTL), RandomPause(2*time.Millisecond))
	r.start()
	r.faultsUntilDone(func() {
		if r.heldBy(a) {
			time.Sleep(10 * time.Millisecond)
			sn.Failover(t)
			time.Sleep(topologyTTL)
		}
	})
	if acks {
		r.finish("failover while held, replica acks", "sentinel (1 replica)", expect{
			overlap: may, lateLost: may, stale: never, lostUpd: never, refused: may})
		return
	}
	r.finish("failover while held, no replica acks", "sentinel (1 replica)", expect{
		overlap: may, lateLost: may, stale: may, lostUpd: may, refused: may})
}

func sentinelFailoverAcked(t *testing.T)   { sentinelFailover(t, true) }
func sentinelFailoverUnacked(t *testing.T) { sentinelFailover(t, false) }
