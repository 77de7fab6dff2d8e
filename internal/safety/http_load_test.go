package safety

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/internal/httpcases/frameworks"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/internal/safety/httpload"
	"github.com/reqlock/reqlock/redisstore"
)

// Goroutines and heap after a run, once its connections are closed, are
// compared with a baseline taken before it, on a warmed-up server. A leak
// per request or per waiter would add hundreds or thousands of goroutines;
// five covers the runtime's and net/http's own comings and goings. The heap
// may grow by 4 MiB (pools, the frameworks' caches, the race detector's
// bookkeeping): the run's row gives the request count, and a leak of more
// than 4 MiB ÷ that many bytes a request shows.
const (
	goroutineSlack = 5
	heapSlack      = 4 << 20
)

// One key, Wait mode, a flood at once: while a held request keeps the key,
// 99 more arrive. MaxWaiters (8) of them may wait; the other 91 must get 429
// with Retry-After at once, and only then is the holder let go, so a cap
// that let more wait would never see its 91st 429. Then the 8 waiters run,
// one at a time: exactly 9 runs, 91× 429, and goroutines and heap back where
// they were.
func httpWaitFlood(t *testing.T, storeName string) {
	const clients, maxWaiters = 100, 8
	st := openStore(t, storeName)
	l := core.NewLocker(st.store, core.WithLogger(quiet), core.WithTTL(2*time.Second))
	h := newHTTPRun(t, fmt.Sprintf("%d requests at once for one held key, Wait mode, MaxWaiters %d, 4 frameworks", clients, maxWaiters), storeName)
	for _, fw := range frameworks.All {
		tr := httpload.NewTracker()
		srvURL := fw.Serve(t, []httpcases.Route{{Method: "POST", Path: "/w", Key: httpcases.KeySource{Kind: httpcases.FromHeader, Name: httpload.KeyHeader},
			Lock:    httplock.Config{Locker: l, Logger: quiet, Mode: httplock.Wait, MaxWait: 10 * time.Second, MaxWaiters: maxWaiters},
			Handler: tr.Handler(RandomPause(2 * time.Millisecond))}})
		url := srvURL + "/w"
		c := httpload.NewClient(clients)
		warm(t, c, url, httpload.KeyHeader, "warm")
		base := httpload.Take()

		results := make(chan httpload.Result, clients)
		send := func(hdr ...string) {
			go func() {
				results <- httpload.Send(c, httpload.Request{Req: post(url, hdr...), Label: "k", Want: want(200, 429)})
			}()
		}
		send(httpload.KeyHeader, "k", httpload.HoldHeader, "1")
		if !tr.Held() {
			t.Fatalf("%s: the holder never reached the handler", fw.Name)
		}
		for range clients - 1 {
			send(httpload.KeyHeader, "k")
		}
		var res []httpload.Result
		rejected := 0
		bound := time.NewTimer(20 * time.Second)
		for rejected < clients-1-maxWaiters && len(res) < clients {
			select {
			case r := <-results:
				res = append(res, r)
				if r.Status == http.StatusTooManyRequests {
					rejected++
				}
			case <-bound.C:
				h.failf("%s: %d× 429 after 20s, want %d: more than %d waited", fw.Name, rejected, clients-1-maxWaiters, maxWaiters)
				rejected = clients // give up waiting
			}
		}
		tr.Let()
		for len(res) < clients {
			select {
			case r := <-results:
				res = append(res, r)
			case <-bound.C:
				t.Fatalf("%s: %d of %d requests unanswered after 20s", fw.Name, clients-len(res), clients)
			}
		}
		bound.Stop()
		tally := httpload.Count(res)
		stats := tr.Stats()
		stats.Runs-- // the warm-up
		h.add(fw.Name, tally, stats)
		if tally.Status[http.StatusOK] != 1+maxWaiters || tally.Status[http.StatusTooManyRequests] != clients-1-maxWaiters {
			h.failf("%s: %s, want %d× 200 and %d× 429", fw.Name, tally.Statuses(), 1+maxWaiters, clients-1-maxWaiters)
		}
		c.CloseIdleConnections()
		snap, ok := httpload.Settle(base, goroutineSlack, heapSlack, 5*time.Second)
		if !ok {
			h.failf("%s: goroutines or heap did not come back: %s", fw.Name, httpload.Growth(base, snap))
		}
		h.measure("%s %s", fw.Name, httpload.Growth(base, snap))
	}
	h.finish()
}

// A Redis fault mid-request, between the Locker and Redis.
type httpFault struct {
	name    string
	must503 bool // the fault outlasts StoreTimeout for every call it meets
	apply   func(p *faultproxy.Proxy, srv *redistest.Server)
}

const faultStoreTimeout = 100 * time.Millisecond

var (
	faultCut = httpFault{name: "Redis connections cut every 20ms for 1s", apply: func(p *faultproxy.Proxy, _ *redistest.Server) {
		for end := time.Now().Add(time.Second); time.Now().Before(end); {
			p.Cut()
			time.Sleep(20 * time.Millisecond)
		}
	}}
	faultDelay = httpFault{name: "Redis replies delayed 3× StoreTimeout for 1s", must503: true, apply: func(p *faultproxy.Proxy, _ *redistest.Server) {
		p.Delay(faultproxy.Downstream, 3*faultStoreTimeout)
		time.Sleep(time.Second)
		p.Heal()
		p.Cut() // go-redis drops the connections it timed out on; leave none half-read
	}}
	faultPause = httpFault{name: "Redis SIGSTOPped for 1.5 leases", must503: true, apply: func(_ *faultproxy.Proxy, srv *redistest.Server) {
		srv.Pause()
		time.Sleep(faultLease * 3 / 2)
		srv.Resume()
	}}
)

// faultLease is the lease in the fault scenarios: what a failed call leaves
// behind is gone within it.
const faultLease = time.Second

// Redis faults while requests are in flight through all four frameworks,
// the Locker reaching Redis through the fault proxy. Three routes each:
// Reject, Wait and Reject with fail-open, StoreTimeout 100ms. Every
// response must be a handler's 200, a 409 or 429, or (not on the fail-open
// route) a 503 with Retry-After: never a 500, never an empty 200. Once the
// fault is over and the load has stopped, every lock in Redis must be gone
// within a lease, and each key then runs at once.
func httpFaults(t *testing.T, f httpFault) {
	srv := redistest.Start(t)
	p := faultproxy.Start(t, srv.Addr)
	direct := client(t, srv.Addr)
	// A pool of a fixed size: connections the faults broke are replaced, and
	// what the pool keeps must not depend on the machine's core count.
	opts := redistest.ClientOptions(p.Addr())
	opts.PoolSize = 8
	proxied := redis.NewClient(opts)
	t.Cleanup(func() { _ = proxied.Close() })
	l := core.NewLocker(redisstore.New(proxied), core.WithLogger(quiet), core.WithTTL(faultLease), core.WithRetry(fastRetry))
	h := newHTTPRun(t, f.name+", requests in flight, 4 frameworks", "redis (fault proxy)")
	h.faults = true
	tr := httpload.NewTracker()
	handler := tr.Handler(RandomPause(5 * time.Millisecond))
	key := httpcases.KeySource{Kind: httpcases.FromHeader, Name: httpload.KeyHeader}
	routes := []httpcases.Route{
		{Method: "POST", Path: "/r", Key: key, Handler: handler,
			Lock: httplock.Config{Locker: l, Logger: quiet, StoreTimeout: faultStoreTimeout}},
		{Method: "POST", Path: "/w", Key: key, Handler: handler,
			Lock: httplock.Config{Locker: l, Logger: quiet, StoreTimeout: faultStoreTimeout, Mode: httplock.Wait, MaxWait: 400 * time.Millisecond, MaxWaiters: 4}},
		{Method: "POST", Path: "/o", Key: key, Handler: handler,
			Lock: httplock.Config{Locker: l, Logger: quiet, StoreTimeout: faultStoreTimeout, FailOpen: true}},
	}
	c := httpload.NewClient(8)
	var urls []string
	for _, fw := range frameworks.All {
		u := fw.Serve(t, routes)
		for _, r := range []string{"/r", "/w", "/o"} {
			warm(t, c, u+r, httpload.KeyHeader, "warm")
		}
		urls = append(urls, u)
	}
	base := httpload.Take()
	runsBefore := tr.Stats()
	keys := []string{"a", "b", "c", "d", "e", "f"}
	rnd := newLockedRand(t, 2)
	done := make(chan []httpload.Result, 1)
	go func() {
		done <- httpload.Load{Client: c, Workers: 8, Max: 1_000_000, Until: time.Now().Add(300*time.Millisecond + 2*time.Second),
			Next: func(int) httpload.Request {
				var u, route, k string
				rnd.with(func(r *rand.Rand) {
					u, route, k = urls[r.IntN(len(urls))], []string{"/r", "/w", "/o"}[r.IntN(3)], keys[r.IntN(len(keys))]
				})
				w := want(200, 409, 503)
				switch route {
				case "/w":
					w = want(200, 409, 429, 503)
				case "/o":
					w = want(200, 409)
				}
				return httpload.Request{Req: post(u+route, httpload.KeyHeader, k), Label: route + "\x00" + k, Want: w}
			}}.Run(context.Background())
	}()
	time.Sleep(300 * time.Millisecond)
	f.apply(p, srv)
	res := <-done
	tally := httpload.Count(res)
	st := tr.Stats()
	st.Runs -= runsBefore.Runs
	st.Unlocked -= runsBefore.Unlocked
	h.add("load", tally, st)
	if f.must503 && tally.Status[http.StatusServiceUnavailable] == 0 {
		h.failf("no 503 while Redis did not answer in time")
	}

	// Nothing is in flight now: every lock left in Redis is one a failed
	// call left behind, and must go within its lease.
	ctx := context.Background()
	left, start := -1, time.Now()
	var gone time.Duration
	var k httpload.Keys
	for {
		var err error
		if k, err = httpload.ScanKeys(ctx, direct, "reqlock:"); err != nil {
			t.Fatal(err)
		}
		if left < 0 {
			left = k.Locks
		}
		if gone = time.Since(start); k.Locks == 0 || gone > faultLease+2*time.Second {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if k.Locks > 0 {
		h.failf("%d locks still in Redis %v after the load", k.Locks, faultLease+2*time.Second)
	}
	if pr := k.Problem(); pr != "" {
		h.failf("%s", pr)
	}
	free := 0
	for _, u := range urls {
		for _, route := range []string{"/r", "/w"} {
			for _, key := range keys {
				r := httpload.Send(c, httpload.Request{Req: post(u+route, httpload.KeyHeader, key), Want: want(200)})
				if r.Err != nil {
					h.failf("%s%s key %s after the fault: %v", u, route, key, r.Err)
					continue
				}
				free++
			}
		}
	}
	c.CloseIdleConnections()
	snap, ok := httpload.Settle(base, goroutineSlack, heapSlack, faultLease+5*time.Second)
	if !ok {
		h.failf("goroutines or heap did not come back: %s", httpload.Growth(base, snap))
		t.Log(httpload.Goroutines())
	}
	h.measure("%d fail-open runs; %d locks in Redis when the load stopped, 0 after %v; then %d of %d keys ran at once; %s",
		st.Unlocked, left, gone.Round(10*time.Millisecond), free, len(urls)*2*len(keys), httpload.Growth(base, snap))
	h.finish()
}

// The load run: many users with duplicates through all four frameworks,
// which share one Locker as instances of one service would. /pay locks per
// user in Reject mode (the user from the stand-in auth), /order/{id} per
// order in Wait mode with one scope for every framework. Half the requests
// go to five hot users and orders, so duplicates meet. No 5xx at all, every
// 409 while another request for the key ran, never two runs for a lock key
// at once (one tracker for all four servers), and goroutines and heap back
// where they were.
func httpLoad(t *testing.T, storeName string) {
	st := openStore(t, storeName)
	l := core.NewLocker(st.store, core.WithLogger(quiet))
	const workers, users = 24, 40
	d := httpLoadFor(t)
	h := newHTTPRun(t, fmt.Sprintf("load: %d clients, %d users and orders, half on 5 hot ones, %v, 4 frameworks", workers, users, d), storeName)
	tr := httpload.NewTracker()
	handler := tr.Handler(RandomPause(3 * time.Millisecond))
	routes := []httpcases.Route{
		{Method: "POST", Path: "/pay", Key: httpcases.KeySource{Kind: httpcases.FromUser}, Handler: handler,
			Lock: httplock.Config{Locker: l, Logger: quiet}},
		{Method: "POST", Path: "/order/{id}", Key: httpcases.KeySource{Kind: httpcases.FromParam, Name: "id"}, Handler: handler,
			Lock: httplock.Config{Locker: l, Logger: quiet, Mode: httplock.Wait, MaxWait: 200 * time.Millisecond, MaxWaiters: 8, Scope: "orders"}},
	}
	c := httpload.NewClient(workers)
	var urls []string
	for _, fw := range frameworks.All {
		u := fw.Serve(t, routes)
		warm(t, c, u+"/pay", httpcases.UserHeader, "warm")
		warm(t, c, u+"/order/warm")
		urls = append(urls, u)
	}
	base := httpload.Take()
	runsBefore := tr.Stats().Runs
	rnd := newLockedRand(t, 3)
	res := httpload.Load{Client: c, Workers: workers, Max: 1_000_000, Until: time.Now().Add(d),
		Next: func(i int) httpload.Request {
			var who int
			var pay bool
			rnd.with(func(r *rand.Rand) {
				who = r.IntN(users)
				if r.IntN(2) == 0 {
					who = r.IntN(5)
				}
				pay = r.IntN(2) == 0
			})
			u := urls[i%len(urls)]
			if pay {
				user := fmt.Sprintf("user-%d", who)
				return httpload.Request{Req: post(u+"/pay", httpcases.UserHeader, user), Label: "pay\x00" + user, Want: want(200, 409)}
			}
			id := fmt.Sprintf("order-%d", who)
			return httpload.Request{Req: post(u + "/order/" + id), Label: "order\x00" + id, Want: want(200, 409, 429)}
		}}.Run(context.Background())
	tally := httpload.Count(res)
	stats := tr.Stats()
	stats.Runs -= runsBefore
	h.add("load", tally, stats)
	if tally.Status[http.StatusConflict] == 0 {
		h.failf("no 409: the duplicates never met")
	}
	c.CloseIdleConnections()
	snap, ok := httpload.Settle(base, goroutineSlack, heapSlack, 10*time.Second)
	if !ok {
		h.failf("goroutines or heap did not come back: %s", httpload.Growth(base, snap))
	}
	h.measure("%s (tolerance +%d, +%s)", httpload.Growth(base, snap), goroutineSlack, httpload.MiB(heapSlack))
	h.finish()
}
