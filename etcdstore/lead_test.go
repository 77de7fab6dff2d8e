package etcdstore_test

import (
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/etcdstore"
	"github.com/reqlock/reqlock/internal/etcdtest"
	"github.com/reqlock/reqlock/internal/leadtest"
)

// Three instances lead one key on one etcd member, each with a client and
// a Locker of its own in this process; the leader's link is stalled for
// two leases (its fn runs on, and must stop acting when its lease runs
// out by its own clock), then the next leader's cut for good: at most one
// acts at a time, terms only grow, a new leader acts within a lease and a
// hand-off, and the register that checks terms takes no stale write.
func TestLeadFailover(t *testing.T) {
	const ttl = 2 * time.Second // etcd leases count whole seconds
	c := etcdtest.Start(t)
	r := leadtest.NewRun(t, ttl)
	var insts []leadtest.Instance
	for _, n := range []string{"a", "b", "c"} {
		insts = append(insts, r.StartLocal(n, etcdstore.New(c.Client(t))))
	}
	r.Drive(insts, leadtest.Pause, leadtest.Kill)
	// etcd revokes an expired lease on its lessor's next check, up to
	// half a second late.
	r.Check(ttl + store.HandOffTimeout + 500*time.Millisecond + 750*time.Millisecond)
}
