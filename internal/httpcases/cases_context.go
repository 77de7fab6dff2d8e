package httpcases

import (
	"net/http"

	"github.com/reqlock/reqlock/httplock"
)

// A context value nobody set (the lock placed before the middleware that
// sets it) leaves every request unlocked: each middleware says so once. On a
// route that requires a key it is the server's fault, not the client's: 500
// key_misconfigured and an error in the log, once per burst, never the
// client's 400 key_missing.
func contextValueMissing(e *Env) {
	p := e.Probe()
	var logs LogBuffer
	cfg := httplock.Config{Locker: e.Locker(), Logger: logs.Logger()}
	strict := cfg
	strict.KeyRequired = true
	key := KeySource{Kind: FromValue, Name: "session"}
	url := e.Serve(
		Route{Method: "POST", Path: "/orders", Lock: cfg, Key: key, Handler: p.Sleep(0)},
		Route{Method: "POST", Path: "/strict", Lock: strict, Key: key, Handler: p.Sleep(0)},
		Route{Method: "POST", Path: "/strict2", Lock: strict, Key: key, Handler: p.Sleep(0)},
	)
	for _, r := range collect(e, fanOut(e, 5, "POST", url+"/orders", UserHeader, "alice"), 5) {
		expectOK(e, r)
	}
	for _, path := range []string{"/strict", "/strict2"} {
		for _, r := range collect(e, fanOut(e, 5, "POST", url+path, UserHeader, "alice"), 5) {
			expect(e, r, http.StatusInternalServerError, "key_misconfigured")
		}
	}
	if calls, _ := p.Stats(); calls != 5 {
		e.T.Fatalf("handlers ran %d times, want 5 (the unlocked route's)", calls)
	}
	if n := logs.Count("running requests without it unlocked"); n != 1 {
		e.T.Fatalf("%d warnings about the missing context value, want one for the route that runs unlocked:\n%s", n, logs.String())
	}
	// One error per burst per route: each misconfigured route is named.
	if n := logs.Count("level=ERROR"); n != 2 {
		e.T.Fatalf("%d error lines, want one per route for the burst:\n%s", n, logs.String())
	}
	for _, scope := range []string{"/strict", "/strict2"} {
		if n := logs.Count(scope + "\" reqlock.outcome=key_misconfigured"); n != 1 {
			e.T.Errorf("%d error lines for %s, want 1:\n%s", n, scope, logs.String())
		}
	}
}

// A context value of a type no key can be made of is the server's bug: 500
// and an error in the log, not a 400 that blames the client.
func contextValueWrongType(e *Env) {
	p := e.Probe()
	var logs LogBuffer
	url := e.Serve(Route{
		Method: "POST", Path: "/orders",
		Lock: httplock.Config{Locker: e.Locker(), Logger: logs.Logger()}, Key: KeySource{Kind: FromValue, Name: AccountKey},
		Handler: p.Sleep(0),
	})
	for range 3 {
		expect(e, e.Send("POST", url+"/orders", UserHeader, "alice"), http.StatusInternalServerError, "key_misconfigured")
	}
	if calls, _ := p.Stats(); calls != 0 {
		e.T.Fatalf("handler ran %d times", calls)
	}
	if n := logs.Count("level=ERROR"); n != 1 {
		e.T.Fatalf("%d error lines, want one for the burst:\n%s", n, logs.String())
	}
}
