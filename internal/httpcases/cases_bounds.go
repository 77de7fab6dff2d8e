package httpcases

import (
	"fmt"
	"net/http"
	"time"

	"github.com/reqlock/reqlock/httplock"
)

// One store outage is one burst, however many middlewares see it: six
// routes sharing a logger log it once, not once each.
func outageLoggedOnce(e *Env) {
	if e.Backend.Down == nil {
		e.T.Skip("this store cannot go down")
	}
	p := e.Probe()
	var logs LogBuffer
	cfg := httplock.Config{Locker: e.OutageLocker(), StoreTimeout: 250 * time.Millisecond, Logger: logs.Logger()}
	var routes []Route
	for i := range 6 {
		routes = append(routes, userRoute("POST", fmt.Sprintf("/r%d", i), cfg, p.Sleep(0)))
	}
	url := e.Serve(routes...)
	e.Backend.Down()
	for _, rt := range routes {
		expect(e, e.Send("POST", url+rt.Path, UserHeader, "alice"), http.StatusServiceUnavailable, "lock_unavailable")
	}
	if n := logs.Count("lock store unavailable"); n != 1 {
		e.T.Fatalf("%d warnings for one outage across six middlewares, want 1:\n%s", n, logs.String())
	}
}

// MaxWait bounds all of a request's wait for its key, the first attempt
// included: a store that hangs on that attempt is not given StoreTimeout
// on top.
func maxWaitBoundsFirstAttempt(e *Env) {
	if e.Backend.Hang == nil {
		e.T.Skip("this store cannot hang")
	}
	p := e.Probe()
	const maxWait, storeTimeout = 200 * time.Millisecond, 10 * time.Second
	cfg := httplock.Config{Locker: e.OutageLocker(), Mode: httplock.Wait, MaxWait: maxWait, StoreTimeout: storeTimeout}
	url := e.Serve(userRoute("POST", "/orders", cfg, p.Sleep(0)))
	e.Backend.Hang()
	r := e.Send("POST", url+"/orders", UserHeader, "alice")
	expect(e, r, http.StatusServiceUnavailable, "lock_unavailable")
	// A bound, not a speed: without MaxWait on the first attempt, the
	// Redis clients' 2s read timeout is what ends it.
	if bound := maxWait + 1300*time.Millisecond; r.Elapsed > bound {
		e.T.Fatalf("answered after %v, past %v; MaxWait is %v (StoreTimeout %v)", r.Elapsed, bound, maxWait, storeTimeout)
	}
}
