package redlock

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/leadtest"
	"github.com/reqlock/reqlock/internal/redistest"
)

// Three processes lead one key on three Redis masters; the leader is
// stopped (SIGSTOP) for two leases, then the next one killed: at most one
// acts at a time, terms only grow, a new leader acts within a lease and a
// hand-off, and the register that checks terms takes no stale write.
func TestLeadFailover(t *testing.T) {
	if leadtest.Child(childStore) {
		return
	}
	const ttl = time.Second
	var addrs []string
	for _, s := range redistest.StartN(t, 3) {
		addrs = append(addrs, s.Addr)
	}
	r := leadtest.NewRun(t, ttl)
	var insts []leadtest.Instance
	for _, n := range []string{"a", "b", "c"} {
		insts = append(insts, r.Spawn(n, addrs))
	}
	r.Drive(insts, leadtest.Pause, leadtest.Kill)
	r.Check(ttl + store.HandOffTimeout + 750*time.Millisecond)
}

// childStore is a child instance's store: Redlock over the masters at
// addrs.
func childStore(addrs []string) (core.Store, func()) {
	var clients []redis.UniversalClient
	for _, a := range addrs {
		clients = append(clients, redis.NewClient(redistest.ClientOptions(a)))
	}
	return New(clients...), func() {
		for _, c := range clients {
			c.Close()
		}
	}
}
