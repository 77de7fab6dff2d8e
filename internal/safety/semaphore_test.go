package safety

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/permittest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore"
)

// The semaphore's rows: three permits of one key (internal/permittest),
// instances taking them while a holder is killed or stopped, its bytes
// delayed, or the store restarted. Checked: never more than three holders
// trusting their permits at once where the docs promise it, and no stale
// write taken by the register fenced for three permits. The PostgreSQL and
// etcd rows are in their modules (pgstore/internal/pgsafety, etcdstore).

const (
	semN    = 3
	semTTL  = 500 * time.Millisecond
	semLoad = 2500 * time.Millisecond
	// semHold is how long a process that is about to be stopped or killed
	// holds its permit between its two writes: long enough for the signal
	// to land inside the hold.
	semHold  = 200 * time.Millisecond
	semQuick = 3 * time.Millisecond
)

// TestSafetySemaphore runs every row and prints the table.
func TestSafetySemaphore(t *testing.T) {
	if permittest.Child(semChildStore) {
		return
	}
	if !redistest.Available() {
		t.Fatal(redistest.InstallHint)
	}
	var rows []permittest.Row
	for _, sc := range semScenarios {
		t.Run(sc.name, func(t *testing.T) {
			res := sc.run(t)
			rows = append(rows, permittest.Row{Scenario: sc.scenario, Store: sc.store, Result: res})
		})
	}
	t.Logf("semaphore safety table:\n%s", permittest.Table(semN, rows))
}

var semScenarios = []struct {
	name, scenario, store string
	run                   func(t *testing.T) permittest.Result
}{
	{"memory/no-faults", "no faults, 5 instances", "memory", semMemoryNoFaults},
	{"redis/no-faults", "no faults, 3 instances + 2 processes", "redis", semRedisNoFaults},
	{"redis/kill-holder", "holder process killed (kill -9) mid-hold, twice", "redis", semRedisKillHolder},
	{"redis/sigstop-holder", "holder process SIGSTOPped for 2 leases mid-hold", "redis", func(t *testing.T) permittest.Result {
		return semRedisStopHolder(t, false)
	}},
	{"redis/delayed-bytes", "2 of 4 instances' bytes delayed past the lease, on and off", "redis", semRedisDelayed},
	{"redis/restart-empty", "Redis killed (kill -9) and restarted empty while held", "redis", func(t *testing.T) permittest.Result {
		return semRedisRestart(t, false)
	}},
	{"redis/restart-aof", "Redis killed (kill -9) and restarted from its append-only file while held", "redis (appendfsync always)", func(t *testing.T) permittest.Result {
		return semRedisRestart(t, true)
	}},
	{"cluster/master-paused", "the permits' master SIGSTOPped for 1.5 leases", "cluster (3 masters)", semClusterMasterPaused},
	{"broken/limit-ignored", "store admits N+1 (the limit off by one)", "memory", semBrokenLimit},
	{"broken/register-unfenced", "holder process SIGSTOPped; the register takes every write", "redis", func(t *testing.T) permittest.Result {
		return semRedisStopHolder(t, true)
	}},
}

// semChildStore is a child instance's store: Redis at addrs[0].
func semChildStore(addrs []string) (core.Store, func()) {
	c := redis.NewClient(redistest.ClientOptions(addrs[0]))
	return redisstore.New(c), func() { _ = c.Close() }
}

// loadUntil is when a scenario's faults stop.
func loadUntil() time.Time { return time.Now().Add(semLoad) }

func semMemoryNoFaults(t *testing.T) permittest.Result {
	r := permittest.NewRun(t, semN, semTTL)
	s := memorystore.New()
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		r.StartLocal(n, s, semQuick)
	}
	time.Sleep(semLoad)
	return r.Check(permittest.Expect{})
}

// semRedis starts Redis and three local instances on it.
func semRedis(t *testing.T, extra ...string) (*permittest.Run, *redistest.Server) {
	srv := redistest.Start(t, extra...)
	r := permittest.NewRun(t, semN, semTTL)
	for _, n := range []string{"a", "b", "c"} {
		r.StartLocal(n, redisstore.New(client(t, srv.Addr)), semQuick)
	}
	return r, srv
}

// semLong is how long the holders that a restart hits hold their permits.
const semLong = 300 * time.Millisecond

func semRedisNoFaults(t *testing.T) permittest.Result {
	r, srv := semRedis(t)
	r.Spawn("p1", []string{srv.Addr}, semQuick)
	r.Spawn("p2", []string{srv.Addr}, semQuick)
	time.Sleep(semLoad)
	return r.Check(permittest.Expect{})
}

// A process is killed while it holds a permit; another takes its turn.
// Its place is lost for a lease, and its trust ends by its clock.
func semRedisKillHolder(t *testing.T) permittest.Result {
	r, srv := semRedis(t)
	for i, name := range []string{"p1", "p2"} {
		p := r.Spawn(name, []string{srv.Addr}, semHold)
		if !r.Held(name, 10*time.Second) {
			t.Fatalf("process %s never held a permit", name)
		}
		time.Sleep(semHold / 4)
		p.Kill()
		if i == 0 {
			time.Sleep(semLoad / 2)
		}
	}
	time.Sleep(semLoad / 2)
	return r.Check(permittest.Expect{})
}

// A process is stopped between its two writes for two leases, again and
// again: the store gives its place to another, its trust ends by its
// clock, and its second write, after N newer permits wrote, is refused.
// With the register unfenced, that write is taken: the checker must say so.
func semRedisStopHolder(t *testing.T, unfenced bool) permittest.Result {
	r, srv := semRedis(t)
	if unfenced {
		r.Reg.Unfenced()
	}
	p := r.Spawn("p1", []string{srv.Addr}, semHold)
	for until := loadUntil(); time.Now().Before(until); {
		if !r.Held("p1", 10*time.Second) {
			t.Fatal("the process never held a permit")
		}
		time.Sleep(semHold / 8)
		p.Pause(2 * semTTL)
		time.Sleep(semTTL / 2)
	}
	return r.Check(permittest.Expect{Refused: !unfenced, Broken: unfenced})
}

// Two instances reach Redis through a fault proxy that delays their
// commands by more than a lease, on and off: their acquires land late,
// their grants come back after their validity, their releases late.
func semRedisDelayed(t *testing.T) permittest.Result {
	r, srv := semRedis(t)
	p := faultproxy.Start(t, srv.Addr)
	for _, n := range []string{"slow1", "slow2"} {
		r.StartLocal(n, redisstore.New(client(t, p.Addr())), semQuick)
	}
	for until, on := loadUntil(), true; time.Now().Before(until); on = !on {
		d := time.Duration(0)
		if on {
			d = semTTL + 100*time.Millisecond
		}
		p.Delay(faultproxy.Upstream, d)
		time.Sleep(400 * time.Millisecond)
	}
	p.Heal()
	return r.Check(permittest.Expect{})
}

// Redis is killed while three permits are held, some of them for a while,
// and restarted at once. Without persistence every permit is gone, and
// three more holders may trust theirs while the first three still do, as
// docs/safety.md says of locks; from an append-only file synced at every write the permits come
// back, and three at most is promised.
func semRedisRestart(t *testing.T, aof bool) permittest.Result {
	var extra []string
	if aof {
		extra = []string{"--appendonly", "yes", "--appendfsync", "always"}
	}
	r, srv := semRedis(t, extra...)
	for _, n := range []string{"long1", "long2", "long3"} {
		r.StartLocal(n, redisstore.New(client(t, srv.Addr)), semLong)
	}
	for until := loadUntil(); time.Now().Before(until); {
		if !r.Held("long1", 10*time.Second) {
			t.Fatal("no permit held")
		}
		srv.Restart()
		time.Sleep(semTTL)
	}
	return r.Check(permittest.Expect{MoreThanN: !aof})
}

// The master that serves the key's slot is stopped for 1.5 leases (inside
// the node timeout: no failover). The holders on it lose their permits by
// their own clocks before the master, resumed, admits anyone new.
func semClusterMasterPaused(t *testing.T) permittest.Result {
	c := redistest.StartCluster(t, 3)
	r := permittest.NewRun(t, semN, semTTL)
	for _, n := range []string{"a", "b", "c", "d"} {
		r.StartLocal(n, redisstore.New(clusterClient(t, c)), semQuick)
	}
	skey, err := core.NewLocker(memorystore.New()).StoreKey(permittest.Key)
	if err != nil {
		t.Fatal(err)
	}
	_, owner := c.KeyOwner(t, skey)
	for until := loadUntil(); time.Now().Before(until); {
		if !r.Held("a", 10*time.Second) {
			t.Fatal("no permit held")
		}
		owner.Pause()
		time.Sleep(semTTL * 3 / 2)
		owner.Resume()
		time.Sleep(semTTL / 2)
	}
	return r.Check(permittest.Expect{})
}

// overLimit is a memory store whose permit acquire admits one more holder
// than asked: broken on purpose, for the checker to catch.
type overLimit struct{ *memorystore.Store }

func (o overLimit) AcquirePermit(ctx context.Context, l store.Lease, limit int) (store.Grant, error) {
	return o.Store.AcquirePermit(ctx, l, limit+1)
}

func semBrokenLimit(t *testing.T) permittest.Result {
	r := permittest.NewRun(t, semN, semTTL)
	s := overLimit{memorystore.New()}
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		r.StartLocal(n, s, semQuick)
	}
	time.Sleep(semLoad)
	return r.Check(permittest.Expect{Broken: true})
}
