package safety

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/internal/httpcases/frameworks"
	"github.com/reqlock/reqlock/internal/safety/httpload"
)

// The HTTP scenarios send hostile input and bounded load through all four
// middlewares (net/http, Gin, Echo v4, Echo v5), each on a loopback server
// with a real Locker, and check what the docs promise: every response is a
// 200 from the handler, a 400 problem for a bad key, or a 409, 429 or 503
// problem with Retry-After; no two handler runs for one lock key at once;
// only hashed keys in Redis, each expiring; bounded waiters, goroutines,
// heap and Redis memory.

// post is a POST to url with headers (name, value, name, value…).
func post(url string, hdr ...string) *http.Request {
	req, err := http.NewRequest("POST", url, nil)
	if err != nil {
		panic(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return req
}

// want accepts the listed statuses.
func want(codes ...int) func(int) error {
	return func(status int) error {
		for _, c := range codes {
			if status == c {
				return nil
			}
		}
		return fmt.Errorf("status %d, want one of %v", status, codes)
	}
}

// lockedRand is a rand.Rand for concurrent Next calls.
type lockedRand struct {
	mu  sync.Mutex
	rnd *rand.Rand
}

func newLockedRand(t *testing.T, stream uint64) *lockedRand {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	return &lockedRand{rnd: rand.New(rand.NewPCG(seed, stream))}
}

func (r *lockedRand) with(f func(*rand.Rand)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(r.rnd)
}

// warm sends one request that must run, so that connection pools, scripts
// and the frameworks' lazy state exist before a baseline is taken.
func warm(t *testing.T, c *http.Client, url string, hdr ...string) {
	t.Helper()
	if res := httpload.Send(c, httpload.Request{Req: post(url, hdr...), Want: want(200)}); res.Err != nil {
		t.Fatalf("warm-up %s: %v", url, res.Err)
	}
}

// Hostile headers, query strings, path segments and Idempotency-Keys, one
// framework after the other: braces, globs, invalid UTF-8, control bytes
// where the source allows them, keys at and past 1 KiB, keys missing,
// empty, repeated and malformed. A third of the keys come from a small pool,
// so that hostile keys also collide in flight. On Redis a scan runs beside
// the load: every key it finds must be prefix{22 base64url chars} with a
// known suffix, and expire.
func httpHostile(t *testing.T, storeName string) {
	st := openStore(t, storeName)
	l := core.NewLocker(st.store, core.WithLogger(quiet))
	h := newHTTPRun(t, "hostile header, query, path and Idempotency-Key values, 4 frameworks", storeName)
	rnd := newLockedRand(t, 1)
	per := httpLoadFor(t) / 4
	var scans, seen, foreign, noExpiry int
	var scanErr error
	for _, fw := range frameworks.All {
		tr := httpload.NewTracker()
		srvURL := fw.Serve(t, httpload.HostileRoutes(l, tr.Handler(RandomPause(2*time.Millisecond))))
		c := httpload.NewClient(8)
		ctx, stop := context.WithCancel(context.Background())
		var scanner sync.WaitGroup
		if st.direct != nil {
			scanner.Go(func() {
				for ctx.Err() == nil {
					k, err := httpload.ScanKeys(ctx, st.direct, "reqlock:")
					if err != nil {
						if ctx.Err() == nil {
							scanErr = err
						}
						return
					}
					scans++
					seen += k.Total
					foreign += k.NForeign
					noExpiry += k.NoExpiry
					if p := k.Problem(); p != "" {
						h.failf("%s: %s", fw.Name, p)
					}
					time.Sleep(20 * time.Millisecond)
				}
			})
		}
		res := httpload.Load{Client: c, Workers: 8, Max: 1_000_000, Until: time.Now().Add(per),
			Next: func(int) (rq httpload.Request) {
				rnd.with(func(r *rand.Rand) { rq = httpload.Hostile(r, srvURL) })
				return rq
			}}.Run(context.Background())
		stop()
		scanner.Wait()
		c.CloseIdleConnections()
		tally := httpload.Count(res)
		h.add(fw.Name, tally, tr.Stats())
		if tally.Status[http.StatusBadRequest] == 0 || tally.Status[http.StatusOK] == 0 {
			h.failf("%s: no 400 or no 200 (%s): the input did not cover both", fw.Name, tally.Statuses())
		}
	}
	if scanErr != nil {
		h.failf("scanning Redis: %v", scanErr)
	}
	if st.direct != nil {
		k, err := httpload.ScanKeys(context.Background(), st.direct, "reqlock:")
		if err != nil {
			h.failf("scanning Redis: %v", err)
		}
		if p := k.Problem(); p != "" {
			h.failf("after the load: %s", p)
		}
		h.measure("%d scans saw %d keys, %d not hashed, %d without TTL; %d keys left, all fence counters", scans+1,
			seen+k.Total, foreign+k.NForeign, noExpiry+k.NoExpiry, k.Total)
		if k.Locks > 0 {
			h.failf("%d locks left after every request was answered", k.Locks)
		}
	} else {
		h.measure("no panics, no 5xx")
	}
	h.finish()
}

// floodTTL is the lease in the distinct-key flood: short, so that what the
// flood leaves behind can be seen to go.
const floodTTL = 500 * time.Millisecond

// fenceLife is how long a fence counter outlives its lock's last use
// (core's fenceTTL: ten leases, at least a minute).
func fenceLife(lease time.Duration) time.Duration { return max(10*lease, time.Minute) }

// perKeyBytes bounds what Redis keeps for one key once its lock is
// released: the fence counter (a ~38-byte key, a 16-digit value, a main
// and an expires dict entry and their bucket slots, jemalloc size
// classes: about 180 bytes) with room to spare. A raw 1 KiB key kept in
// any form would take four times that.
const perKeyBytes = 256

// A flood of distinct 1 KiB keys, each sent once, through all four
// frameworks. On Redis, used_memory grows by no more than perKeyBytes a key
// (plus 1 MiB for client buffers and scripts), every lock is gone once the
// requests are answered and its lease is over, and what is left is fence
// counters that expire within fenceLife. On the memory store, the heap
// after GC comes back within 2 MiB of where it started.
func httpDistinctFlood(t *testing.T, storeName string) {
	st := openStore(t, storeName)
	l := core.NewLocker(st.store, core.WithLogger(quiet), core.WithTTL(floodTTL))
	h := newHTTPRun(t, "distinct 1 KiB keys, each once, 4 frameworks", storeName)
	filler := strings.Repeat("k{*}é", 1000/6)
	var next atomic.Int64
	c := httpload.NewClient(8)
	defer c.CloseIdleConnections()
	type served struct {
		name string
		url  string
		tr   *httpload.Tracker
	}
	var servers []served
	for _, fw := range frameworks.All {
		tr := httpload.NewTracker()
		srvURL := fw.Serve(t, []httpcases.Route{{Method: "POST", Path: "/f", Key: httpcases.KeySource{Kind: httpcases.FromHeader, Name: httpload.KeyHeader},
			Lock: httplock.Config{Locker: l, Logger: quiet}, Handler: tr.Handler(func() time.Duration { return 0 })}})
		warm(t, c, srvURL+"/f", httpload.KeyHeader, "warm")
		servers = append(servers, served{fw.Name, srvURL + "/f", tr})
	}
	ctx := context.Background()
	var memBefore int64
	var heapBase httpload.Snapshot
	if st.direct != nil {
		time.Sleep(floodTTL) // the warm-up locks are released; their fences stay for the whole test
		var err error
		if memBefore, err = httpload.UsedMemory(ctx, st.direct); err != nil {
			t.Fatal(err)
		}
	} else {
		heapBase = httpload.Take()
	}
	per := httpLoadFor(t) / 4
	const maxPer = 2500
	for _, s := range servers {
		res := httpload.Load{Client: c, Workers: 8, Max: maxPer, Until: time.Now().Add(per),
			Next: func(int) httpload.Request {
				key := fmt.Sprintf("%08d%s", next.Add(1), filler)
				return httpload.Request{Req: post(s.url, httpload.KeyHeader, key), Label: key, Want: want(200)}
			}}.Run(ctx)
		stats := s.tr.Stats()
		stats.Runs-- // the warm-up
		h.add(s.name, httpload.Count(res), stats)
	}
	keys := int(next.Load())
	c.CloseIdleConnections()
	if st.direct == nil {
		snap, ok := httpload.Settle(heapBase, 5, 2<<20, 5*time.Second)
		h.measure("%d distinct keys: %s (tolerance +5, +2 MiB; the raw keys alone are %s)", keys,
			httpload.Growth(heapBase, snap), httpload.MiB(int64(keys*len(filler))))
		if !ok {
			h.failf("goroutines or heap did not come back: %s", httpload.Growth(heapBase, snap))
		}
		h.finish()
		return
	}
	memAfter, err := httpload.UsedMemory(ctx, st.direct)
	if err != nil {
		t.Fatal(err)
	}
	bound := int64(keys*perKeyBytes + 1<<20)
	grew := memAfter - memBefore
	if grew > bound {
		h.failf("used_memory grew %d bytes for %d keys, over %d", grew, keys, bound)
	}
	// Every request was answered and released its lock; a lock whose
	// release failed goes when its lease ends.
	var k httpload.Keys
	for deadline := time.Now().Add(floodTTL + 2*time.Second); ; {
		if k, err = httpload.ScanKeys(ctx, st.direct, "reqlock:"); err != nil {
			t.Fatal(err)
		}
		if k.Locks == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if k.Locks > 0 {
		h.failf("%d locks still in Redis a lease after the flood", k.Locks)
	}
	if p := k.Problem(); p != "" {
		h.failf("%s", p)
	}
	if k.LongestTT > fenceLife(floodTTL) {
		h.failf("a key lives %v more, past a fence counter's %v", k.LongestTT, fenceLife(floodTTL))
	}
	h.measure("used_memory %+.0f B a key for %d keys (bound %d B + 1 MiB); after a lease: %d locks, %d fence counters, the last expiring in %v",
		float64(grew)/float64(keys), keys, perKeyBytes, k.Locks, k.Total-k.Locks, k.LongestTT.Round(time.Second))
	// A long run has the time to watch the counters go.
	if loadFor(t) >= fenceLife(floodTTL) {
		n, err := waitEmpty(ctx, st, fenceLife(floodTTL)+10*time.Second)
		if err != nil || n > 0 {
			h.failf("DBSIZE %d (%v) after the fence counters' lifetime", n, err)
		}
		h.measure("DBSIZE %d after %v", n, fenceLife(floodTTL))
	}
	h.finish()
}

// waitEmpty polls DBSIZE until it is 0 or within has passed.
func waitEmpty(ctx context.Context, st httpStore, within time.Duration) (int64, error) {
	deadline := time.Now().Add(within)
	for {
		n, err := st.direct.DBSize(ctx).Result()
		if err != nil || n == 0 || time.Now().After(deadline) {
			return n, err
		}
		time.Sleep(time.Second)
	}
}
