package safety

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/leadtest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore"
	"github.com/reqlock/reqlock/redisstore/redlock"
)

// Leadership (core.Locker.Lead): three instances lead one key; the leader
// is stopped for two leases, then the next one killed. A row's holds are
// terms, an overlap is an act of a term after a later term's first act,
// and the writes are the leaders' writes of their term to a register that
// refuses a lower term than it took (internal/leadtest).

const leadTTL = time.Second

// leadRow checks r and puts its row in the table.
func leadRow(t *testing.T, r *leadtest.Run, scenario, storeName string) {
	res := r.Check(leadTTL + store.HandOffTimeout + 750*time.Millisecond)
	rw := row{scenario: scenario, store: storeName, ops: res.Terms, overlaps: res.Overlaps,
		stale: res.Stale, refused: res.Refused, verdict: "safe"}
	if t.Failed() {
		rw.verdict = "FAIL: " + res.String()
	}
	table.mu.Lock()
	table.rows = append(table.rows, rw)
	table.mu.Unlock()
}

// The instances are goroutines; the leader's link is stalled, the next
// one's cut.
func leadMemory(t *testing.T) {
	r := leadtest.NewRun(t, leadTTL)
	s := memorystore.New()
	var insts []leadtest.Instance
	for _, n := range []string{"a", "b", "c"} {
		insts = append(insts, r.StartLocal(n, s))
	}
	r.Drive(insts, leadtest.Pause, leadtest.Kill)
	leadRow(t, r, "leadership: the leader's link stalled, then the next one's cut", "memory")
}

// The instances are goroutines, each with a link of its own to one Redis
// through a fault proxy: the leader's commands are held for two leases and
// then delivered (its renewals land late), then the next leader is cut off.
func leadLinkHeld(t *testing.T) {
	srv := redistest.Start(t)
	r := leadtest.NewRun(t, leadTTL)
	var insts []leadtest.Instance
	for _, n := range []string{"a", "b", "c"} {
		p := faultproxy.Start(t, srv.Addr)
		insts = append(insts, r.StartLinked(n, redisstore.New(client(t, p.Addr())), p))
	}
	r.Drive(insts, leadtest.Hold, leadtest.Kill)
	leadRow(t, r, "leadership: the leader's link held past its lease then delivered, then the next one cut", "redis")
}

// The instances are processes: SIGSTOP, then SIGKILL.
func leadProcesses(t *testing.T, storeName string, servers int) {
	if leadtest.Child(leadChildStore) {
		return
	}
	var addrs []string
	for _, s := range redistest.StartN(t, servers) {
		addrs = append(addrs, s.Addr)
	}
	r := leadtest.NewRun(t, leadTTL)
	var insts []leadtest.Instance
	for _, n := range []string{"a", "b", "c"} {
		insts = append(insts, r.Spawn(n, addrs))
	}
	r.Drive(insts, leadtest.Pause, leadtest.Kill)
	leadRow(t, r, "leadership: the leader process SIGSTOPped past its lease, then the next one killed", storeName)
}

// leadChildStore is a child's store: Redis at one address, Redlock over
// several.
func leadChildStore(addrs []string) (core.Store, func()) {
	var clients []redis.UniversalClient
	for _, a := range addrs {
		clients = append(clients, redis.NewClient(redistest.ClientOptions(a)))
	}
	closeAll := func() {
		for _, c := range clients {
			_ = c.Close()
		}
	}
	if len(clients) == 1 {
		return redisstore.New(clients[0]), closeAll
	}
	return redlock.New(clients...), closeAll
}
