package httpcases

import (
	"net/http"

	"github.com/reqlock/reqlock/httplock"
)

// An Idempotency-Key that is there but empty is a client's mistake, not a
// request without a key: run unlocked, five at once all ran.
func emptyIdempotencyKey(e *Env) {
	p := e.Probe()
	cfg := httplock.Config{Locker: e.Locker()}
	url := e.Serve(
		Route{Method: "POST", Path: "/payments", Lock: cfg, Key: KeySource{Kind: FromIdempotencyKey}, Handler: p.Sleep(0)},
		Route{Method: "POST", Path: "/bare", Lock: cfg, Key: KeySource{Kind: FromHeader, Name: httplock.HeaderIdempotencyKey}, Handler: p.Sleep(0)},
	)
	for _, path := range []string{"/payments", "/bare"} {
		for _, r := range collect(e, fanOut(e, 5, "POST", url+path, httplock.HeaderIdempotencyKey, ""), 5) {
			expect(e, r, http.StatusBadRequest, "key_invalid")
		}
	}
	if calls, _ := p.Stats(); calls != 0 {
		e.T.Fatalf("handler ran %d times for empty Idempotency-Key headers", calls)
	}
}

// A query that cannot be parsed has no trustworthy key: URL.Query drops the
// bad pairs, and the request ran unlocked.
func malformedQueryKey(e *Env) {
	p := e.Probe()
	url := e.Serve(Route{
		Method: "POST", Path: "/pay",
		Lock: httplock.Config{Locker: e.Locker()}, Key: KeySource{Kind: FromQuery, Name: "order"},
		Handler: p.Sleep(0),
	})
	for _, q := range []string{"order=%zz", "order=a;b", "order=1&utm=%zz", "order="} {
		r := e.Send("POST", url+"/pay?"+q, UserHeader, "alice")
		if r.Status != http.StatusBadRequest {
			e.T.Errorf("?%s: got %d %s, want 400 key_invalid", q, r.Status, r.Body)
			continue
		}
		expect(e, r, http.StatusBadRequest, "key_invalid")
	}
	if calls, _ := p.Stats(); calls != 0 {
		e.T.Fatalf("handler ran %d times for malformed queries", calls)
	}
}
