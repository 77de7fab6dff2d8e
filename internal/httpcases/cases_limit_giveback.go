package httpcases

import (
	"context"
	"net/http"
	"time"

	"github.com/reqlock/reqlock/httplock"
)

// A request that ends badly gives its permit back, as it gives back a
// lock: with Limit 2, two handlers that panic, or two clients that leave
// while inside, leave both places free for the next two requests.

// givebackHandler panics for X-Panic, waits for its client to leave for
// X-Leave (telling inside when it runs and left when its client has gone),
// and holds any other request at the gate.
func givebackHandler(g *limitGate, inside, left chan<- struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Header.Get("X-Panic") != "":
			panic("boom")
		case r.Header.Get("X-Leave") != "":
			inside <- struct{}{}
			select {
			case <-r.Context().Done():
			case <-time.After(15 * time.Second):
			}
			left <- struct{}{}
		default:
			g.ServeHTTP(w, r)
		}
	}
}

// bothEnter sends two requests that the gate holds, checks that both get
// in, lets them go and checks their answers. A request turned away is sent
// again for up to 3s, since the requests before may still be giving their
// permits back as their handlers return; a permit never given back stays
// taken for its whole 10s lease, or for ever under the watchdog.
func bothEnter(e *Env, g *limitGate, url string) {
	e.T.Helper()
	results := make(chan Result, 2)
	send := func() { go func() { results <- e.Send("POST", url, UserHeader, "alice") }() }
	send()
	send()
	deadline := time.Now().Add(3 * time.Second)
	for in := 0; in < 2; {
		select {
		case <-g.entered:
			in++
		case r := <-results:
			if r.Status != http.StatusTooManyRequests || time.Now().After(deadline) {
				e.T.Fatalf("with both requests before it gone, a request answered %d %s: a permit was not given back", r.Status, r.Body)
			}
			time.Sleep(20 * time.Millisecond)
			send()
		case <-time.After(10 * time.Second):
			e.T.Fatal("no request came into the handler within 10s")
		}
	}
	for range 2 {
		g.letOneGo(e)
	}
	for _, r := range collect(e, results, 2) {
		expectOK(e, r)
	}
}

func limitPanicGivesPermitBack(e *Env) {
	keepsPermits(e)
	g := newLimitGate()
	url := e.Serve(userRoute("POST", "/exports", httplock.Config{Locker: e.Locker(), Limit: 2}, givebackHandler(g, nil, nil))) + "/exports"
	e.T.Cleanup(func() { close(g.done) })
	for range 2 {
		if r := e.Send("POST", url, UserHeader, "alice", "X-Panic", "1"); r.Status != http.StatusInternalServerError {
			e.T.Fatalf("panicking handler: got %d %v, want the recovery's 500", r.Status, r.Err)
		}
	}
	bothEnter(e, g, url)
}

func limitClientGoneGivesPermitBack(e *Env) {
	keepsPermits(e)
	g := newLimitGate()
	inside, left := make(chan struct{}, 2), make(chan struct{}, 2)
	// Wait mode: Fiber tells a handler that its client left only on a
	// route where requests may wait (fasthttp itself never does).
	cfg := httplock.Config{Locker: e.Locker(), Limit: 2, Mode: httplock.Wait, MaxWait: 5 * time.Second}
	url := e.Serve(userRoute("POST", "/exports", cfg, givebackHandler(g, inside, left))) + "/exports"
	e.T.Cleanup(func() { close(g.done) })
	for range 2 {
		// The client leaves once its request is inside, however long the
		// store took to let it in.
		ctx, cancel := context.WithCancel(context.Background())
		answered := make(chan Result, 1)
		go func() { answered <- e.Do(ctx, "POST", url, UserHeader, "alice", "X-Leave", "1") }()
		select {
		case <-inside:
		case r := <-answered:
			cancel()
			e.T.Fatalf("a request meant to stay inside answered %d %v", r.Status, r.Err)
		case <-time.After(15 * time.Second):
			cancel()
			e.T.Fatal("the request never came into the handler")
		}
		cancel()
		if r := <-answered; r.Err == nil {
			e.T.Fatalf("a request whose client left answered %d", r.Status)
		}
		select {
		case <-left:
		case <-time.After(15 * time.Second):
			e.T.Fatal("the handler never saw its client leave")
		}
	}
	bothEnter(e, g, url)
}
