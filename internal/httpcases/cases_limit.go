package httpcases

import (
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/httplock"
)

// Config.Limit: up to Limit requests of a key at once, each holding a
// permit of the key's semaphore.

// limitGate is a handler that counts the requests inside it with an atomic
// and holds each one until the case lets it go, so that requests really
// overlap for as long as the case wants.
type limitGate struct {
	in, most atomic.Int32
	entered  chan struct{} // one per request that came in, buffered
	pass     chan struct{} // one receive lets one request go
	done     chan struct{} // closed at cleanup: every request goes
}

func newLimitGate() *limitGate {
	return &limitGate{entered: make(chan struct{}, 64), pass: make(chan struct{}), done: make(chan struct{})}
}

// serve starts the env's server with POST /exports behind cfg and g, and
// returns the route's URL. At cleanup every request inside goes before the
// server closes, which waits for them.
func (g *limitGate) serve(e *Env, cfg httplock.Config) string {
	url := e.Serve(userRoute("POST", "/exports", cfg, g.ServeHTTP)) + "/exports"
	e.T.Cleanup(func() { close(g.done) }) // runs before the server's own cleanup
	return url
}

func (g *limitGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := g.in.Add(1)
	for m := g.most.Load(); n > m && !g.most.CompareAndSwap(m, n); m = g.most.Load() {
	}
	g.entered <- struct{}{}
	select {
	case <-g.pass:
	case <-g.done:
	case <-r.Context().Done():
	case <-time.After(15 * time.Second):
	}
	g.in.Add(-1) // before the permit is released: in never counts a request that let its permit go
	w.WriteHeader(http.StatusOK)
}

// waitEntered waits for a request to come into the handler.
func (g *limitGate) waitEntered(e *Env) {
	e.T.Helper()
	select {
	case <-g.entered:
	case <-time.After(10 * time.Second):
		e.T.Fatalf("no request came into the handler within 10s (%d inside)", g.in.Load())
	}
}

// letOneGo lets one request inside go.
func (g *limitGate) letOneGo(e *Env) {
	e.T.Helper()
	select {
	case g.pass <- struct{}{}:
	case <-time.After(10 * time.Second):
		e.T.Fatal("no request inside the handler to let go within 10s")
	}
}

// keepsPermits skips a case on a store without permits (Redlock).
func keepsPermits(e *Env) {
	if _, ok := e.Backend.Store.(store.Semaphores); !ok {
		e.T.Skip("this store keeps no permits")
	}
}

// Twenty requests of one key at once on a route with Limit 3, Reject mode:
// three run together, the seventeen others get 429 limit_reached with
// Retry-After, and the key takes three again once they are done.
func limitRejectsWhenFull(e *Env) {
	keepsPermits(e)
	g := newLimitGate()
	url := g.serve(e, httplock.Config{Locker: e.Locker(), Limit: 3})
	ch := fanOut(e, 20, "POST", url, UserHeader, "alice")
	for _, r := range collect(e, ch, 17) { // those inside answer only once let go
		expect(e, r, http.StatusTooManyRequests, "limit_reached")
	}
	for range 3 {
		g.waitEntered(e)
	}
	if in := g.in.Load(); in != 3 {
		e.T.Fatalf("%d requests inside with the other 17 turned away, want 3", in)
	}
	for range 3 {
		g.letOneGo(e)
	}
	for _, r := range collect(e, ch, 3) {
		expectOK(e, r)
	}
	if most := g.most.Load(); most != 3 {
		e.T.Fatalf("at most %d requests inside at once, want 3", most)
	}
	again := fanOut(e, 3, "POST", url, UserHeader, "alice")
	for range 3 {
		g.waitEntered(e)
		g.letOneGo(e)
	}
	for _, r := range collect(e, again, 3) {
		expectOK(e, r)
	}
}

// Twenty requests of one key at once on a route with Limit 3, Wait mode:
// three are inside at every moment until the line runs out, never four,
// and every request is served.
func limitWaitServesInTurn(e *Env) {
	keepsPermits(e)
	g := newLimitGate()
	url := g.serve(e, httplock.Config{Locker: e.Locker(), Limit: 3, Mode: httplock.Wait, MaxWait: 20 * time.Second})
	ch := fanOut(e, 20, "POST", url, UserHeader, "alice")
	for range 3 {
		g.waitEntered(e)
	}
	for i := range 17 {
		if in := g.in.Load(); in != 3 {
			e.T.Fatalf("after %d served: %d requests inside, want 3", i, in)
		}
		g.letOneGo(e)
		g.waitEntered(e) // the next in line takes the permit let go
	}
	for range 3 {
		g.letOneGo(e)
	}
	for _, r := range collect(e, ch, 20) {
		expectOK(e, r)
	}
	if most := g.most.Load(); most != 3 {
		e.T.Fatalf("at most %d requests inside at once, want 3", most)
	}
}

// Limit on a store that keeps no permits is refused when the middleware is
// built, naming the field, instead of answering every request with 503.
func limitRefusedWithoutPermits(e *Env) {
	if _, ok := e.Backend.Store.(store.Semaphores); ok {
		e.T.Skip("this store keeps permits")
	}
	defer func() {
		err, _ := recover().(error)
		var ce *httplock.ConfigError
		if !errors.Is(err, httplock.ErrInvalidConfig) || !errors.Is(err, core.ErrSemaphoreUnsupported) ||
			!errors.As(err, &ce) || ce.Field != "Limit" {
			e.T.Fatalf("building the middleware: %v; want a panic with a ConfigError on Limit wrapping core.ErrSemaphoreUnsupported", err)
		}
	}()
	e.Serve(userRoute("POST", "/exports", httplock.Config{Locker: e.Locker(), Limit: 3}, e.Probe().Sleep(0)))
	e.T.Fatal("Limit over a store without permits was accepted")
}

// A full key and a duplicate are told apart: limit_reached (and
// limit_wait_timeout after a wait) with 429 against rejected with 409, in
// the metrics and on the request's span.
func telemetryLimit(e *Env) {
	keepsPermits(e)
	tel := NewTelemetry(e.T)
	l := e.Locker()
	full := httplock.Config{Locker: l, Limit: 2, Telemetry: tel.Config()}
	fullWait := full
	fullWait.Mode, fullWait.MaxWait = httplock.Wait, 300*time.Millisecond
	one := httplock.Config{Locker: l, Telemetry: tel.Config()}
	p := e.Probe()
	url := e.FW.ServeTraced(e.T, tel.TP, []Route{
		userRoute("POST", "/exports", full, p.Block),
		userRoute("POST", "/exports-wait", fullWait, p.Block),
		userRoute("POST", "/orders", one, p.Block),
	})
	e.T.Cleanup(p.Release)
	var held []<-chan Result
	hold := func(path string, n int) {
		for range n {
			held = append(held, e.Async("POST", url+path, UserHeader, "alice"))
			p.Entered(e.T)
		}
	}
	hold("/exports", 2)
	hold("/exports-wait", 2)
	hold("/orders", 1)
	expect(e, e.Send("POST", url+"/exports", UserHeader, "alice"), http.StatusTooManyRequests, "limit_reached")
	expect(e, e.Send("POST", url+"/exports-wait", UserHeader, "alice"), http.StatusTooManyRequests, "limit_reached")
	expect(e, e.Send("POST", url+"/orders", UserHeader, "alice"), http.StatusConflict, "locked")
	p.Release()
	for _, ch := range held {
		expectOK(e, <-ch)
	}
	for _, c := range []struct {
		outcome string
		status  int64
		n       int64
	}{
		{httplock.OutcomeLocked, 200, 5},
		{httplock.OutcomeLimitReached, 429, 1},
		{httplock.OutcomeLimitWaitTimeout, 429, 1},
		{httplock.OutcomeRejected, 409, 1},
	} {
		expectCount(e, tel, c.outcome, c.status, c.n)
		if got := tel.Waits(e.T, c.outcome); got != c.n {
			e.T.Errorf("%s: %d waits timed, want %d", c.outcome, got, c.n)
		}
	}
	Eventually(e.T, "eight server spans", func() bool { return len(tel.ServerSpans()) == 8 })
	events := map[string]string{} // outcome → its rejection event's reason and status
	for _, s := range tel.ServerSpans() {
		outcome := SpanAttr(s.Attributes, "reqlock.outcome")
		if len(s.Events) == 1 && s.Events[0].Name == httplock.EventRejected {
			ev := s.Events[0].Attributes
			events[outcome] = SpanAttr(ev, "reason") + " " + SpanAttr(ev, "http.response.status_code") + " " + SpanAttr(ev, "retry_after_s")
		}
	}
	for outcome, want := range map[string]string{
		httplock.OutcomeLimitReached:     "limit_reached 429 1",
		httplock.OutcomeLimitWaitTimeout: "limit_wait_timeout 429 1",
		httplock.OutcomeRejected:         "rejected 409 1",
	} {
		if events[outcome] != want {
			e.T.Errorf("span with outcome %s: rejection event %q, want %q (all: %v)", outcome, events[outcome], want, events)
		}
	}
}
