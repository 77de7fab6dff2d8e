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
// X-Leave (telling left when it has), and holds any other request at the
// gate.
func givebackHandler(g *limitGate, left chan<- struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Header.Get("X-Panic") != "":
			panic("boom")
		case r.Header.Get("X-Leave") != "":
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
// in, lets them go and checks their answers.
func bothEnter(e *Env, g *limitGate, url string) {
	e.T.Helper()
	ch := fanOut(e, 2, "POST", url, UserHeader, "alice")
	for range 2 {
		select {
		case <-g.entered:
		case r := <-ch:
			e.T.Fatalf("with both requests before it gone, a request answered %d %s: a permit was not given back", r.Status, r.Body)
		case <-time.After(10 * time.Second):
			e.T.Fatal("no request came into the handler within 10s")
		}
	}
	for range 2 {
		g.letOneGo(e)
	}
	for _, r := range collect(e, ch, 2) {
		expectOK(e, r)
	}
}

func limitPanicGivesPermitBack(e *Env) {
	keepsPermits(e)
	g := newLimitGate()
	url := e.Serve(userRoute("POST", "/exports", httplock.Config{Locker: e.Locker(), Limit: 2}, givebackHandler(g, nil))) + "/exports"
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
	left := make(chan struct{}, 2)
	url := e.Serve(userRoute("POST", "/exports", httplock.Config{Locker: e.Locker(), Limit: 2}, givebackHandler(g, left))) + "/exports"
	e.T.Cleanup(func() { close(g.done) })
	for range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		r := e.Do(ctx, "POST", url, UserHeader, "alice", "X-Leave", "1")
		cancel()
		if r.Err == nil {
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
