package safety

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore"
)

// TestSafety runs every scenario and prints the table. Each subtest states
// its expected outcome before it runs; the verdict column says whether the
// run matched it.
func TestSafety(t *testing.T) {
	if !redistest.Available() {
		t.Fatal(redistest.InstallHint)
	}
	t.Cleanup(func() { writeTable(t) })
	for _, s := range scenarios {
		t.Run(s.name, s.run)
	}
}

type scenario struct {
	name string
	run  func(t *testing.T)
}

// scenarios in the order of the table.
var scenarios = []scenario{
	{"memory/no-faults", memoryNoFaults},
	{"redis/no-faults", redisNoFaults},
	{"redis/holder-overruns-lease", redisOverrun},
	{"proxy/delay", proxyDelay},
	{"proxy/hold", proxyHold},
	{"proxy/drop", proxyDrop},
	{"proxy/cut", proxyCut},
	{"redis/kill-restart", redisKillRestart},
	{"redis/sigstop-redis", redisPause},
	{"redis/sigstop-holder-process", processPause},
	{"redis/clock-jumps-ahead", redisClockJumpAhead},
	{"redis/clock-steps-back", redisClockStepBackCounterKept},
	{"redis/clock-steps-back-counter-lost", redisClockStepBackCounterLost},
	{"redlock/no-faults", redlockNoFaults},
	{"redlock/minority-killed", redlockMinorityKilled},
	{"redlock/minority-paused", redlockMinorityPaused},
	{"redlock/majority-paused", redlockMajorityPaused},
	{"redlock/restart-at-once", redlockRestartAtOnce},
	{"redlock/restart-delayed", redlockRestartDelayed},
	{"redlock/minority-clock-fast", redlockMinorityFastClock},
	{"redlock/majority-clock-fast", redlockMajorityFastClock},
	{"redlock/minority-clock-jump", redlockMinorityClockJump},
	{"redlock/bare-majority-clock-jump", redlockBareMajorityClockJump},
	{"cluster/master-paused", clusterMasterPaused},
	{"cluster/slot-moved", clusterSlotMoved},
	{"sentinel/failover-acked", sentinelFailoverAcked},
	{"sentinel/failover-unacked", sentinelFailoverUnacked},
	{"broken/acquire-ignores-NX", brokenIgnoresNX},
	{"broken/release-without-token-check", brokenBlindRelease},
	{"broken/watchdog-trusts-too-long", brokenInflatedValidity},
	{"lead", leadRows}, // every store: the leader killed, paused, its link held
	{"http/hostile-keys/memory", func(t *testing.T) { httpHostile(t, "memory") }},
	{"http/hostile-keys/redis", func(t *testing.T) { httpHostile(t, "redis") }},
	{"http/distinct-key-flood/memory", func(t *testing.T) { httpDistinctFlood(t, "memory") }},
	{"http/distinct-key-flood/redis", func(t *testing.T) { httpDistinctFlood(t, "redis") }},
	{"http/one-key-wait-flood/memory", func(t *testing.T) { httpWaitFlood(t, "memory") }},
	{"http/one-key-wait-flood/redis", func(t *testing.T) { httpWaitFlood(t, "redis") }},
	{"http/redis-faults/cut", func(t *testing.T) { httpFaults(t, faultCut) }},
	{"http/redis-faults/delay", func(t *testing.T) { httpFaults(t, faultDelay) }},
	{"http/redis-faults/sigstop", func(t *testing.T) { httpFaults(t, faultPause) }},
	{"http/load/memory", func(t *testing.T) { httpLoad(t, "memory") }},
	{"http/load/redis", func(t *testing.T) { httpLoad(t, "redis") }},
	{"records/memory/paused-after-effect", effectsMemory},
	{"records/redis/paused-after-effect", effectsRedis},
}

// noWatchdog is a Locker whose locks last their TTL: the watchdog would
// renew a lock through any pause of the goroutine, and only a pause of the
// whole process (worker processes, SIGSTOP) stops it.
func noWatchdog(s core.Store, ttl time.Duration) *core.Locker {
	return core.NewLocker(s, core.WithTTL(ttl), core.WithRetry(fastRetry), core.WithLogger(quiet), core.WithoutWatchdog())
}

// overrun is a holder's pause that, one hold in every, runs past the lease:
// a GC pause or a stopped VM in the middle of the work.
func overrun(ttl time.Duration, every int) func() time.Duration {
	return func() time.Duration {
		if rand.N(every) == 0 {
			return ttl * 3 / 2
		}
		return rand.N(2 * time.Millisecond)
	}
}

func memoryNoFaults(t *testing.T) {
	r := newRun(t, true)
	store := memorystore.New()
	for range 4 {
		r.worker(locker(store, time.Second), RandomPause(2*time.Millisecond))
	}
	r.start()
	r.finish("no faults, 4 goroutines", "memory", expect{})
}

func redisNoFaults(t *testing.T) {
	srv := redistest.Start(t)
	r := newRun(t, true)
	for range 3 {
		r.worker(locker(redisstore.New(client(t, srv.Addr)), time.Second), RandomPause(2*time.Millisecond))
	}
	r.start()
	for i := range 2 {
		r.spawn(workerConfig{Name: "p" + string(rune('1'+i)), Redis: []string{srv.Addr}, TTL: time.Second,
			Pause: 2 * time.Millisecond}, nil)
	}
	r.finish("no faults, 3 goroutines + 2 processes", "redis", expect{})
}

// A holder pauses past its lease now and then (without the watchdog, which
// would renew it through a goroutine's pause). Its Lost() fires by its own
// clock before Redis frees the key; its write after the pause is refused
// by the fence.
func redisOverrun(t *testing.T) {
	srv := redistest.Start(t)
	r := newRun(t, true)
	const ttl = 500 * time.Millisecond // a margin of 7ms between Lost() and the key's expiry in Redis
	for range 3 {
		r.worker(noWatchdog(redisstore.New(client(t, srv.Addr)), ttl), overrun(ttl, 3))
	}
	r.start()
	r.finish("holder pauses past its lease", "redis", expect{refused: must, lateLost: never})
}
