package httpcases

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/reqlock/reqlock/httplock"
)

// Every answer the middleware writes instead of the handler's is an RFC
// 9457 problem with reqlock's stable "code" member, on every framework,
// whatever renders it there (Echo v5 with its own ProblemDetails error
// handler, as the README sets it, included): 409, 400 and 500 here, 429
// and 503 in the cases that cause them, through expect.
func problemBodiesCarryCode(e *Env) {
	p := e.Probe()
	l := e.Locker()
	cfg := httplock.Config{Locker: l}
	required := httplock.Config{Locker: l, KeyRequired: true}
	url := e.Serve(
		Route{Method: "POST", Path: "/orders/{id}", Lock: cfg, Key: KeySource{Kind: FromUser}, Handler: http.HandlerFunc(p.Block)},
		Route{Method: "POST", Path: "/key", Lock: required, Key: KeySource{Kind: FromHeader, Name: "X-Key"}, Handler: p.Sleep(0)},
		Route{Method: "POST", Path: "/account", Lock: cfg, Key: KeySource{Kind: FromValue, Name: AccountKey}, Handler: p.Sleep(0)},
	)
	finish := e.Hold(p, "POST", url+"/orders/1", UserHeader, "alice")
	defer finish()
	for _, c := range []struct {
		path   string
		hdr    []string
		status int
		code   string
	}{
		{"/orders/1", []string{UserHeader, "alice"}, http.StatusConflict, "locked"},
		{"/key", nil, http.StatusBadRequest, "key_missing"},
		{"/key", []string{"X-Key", strings.Repeat("k", httplock.MaxKeyLen+1)}, http.StatusBadRequest, "key_too_long"},
		{"/account", []string{UserHeader, "alice"}, http.StatusInternalServerError, "key_misconfigured"},
	} {
		r := e.Send("POST", url+c.path, c.hdr...)
		expect(e, r, c.status, c.code)
		var members map[string]any
		if err := json.Unmarshal(r.Body, &members); err != nil || members["code"] != c.code {
			e.T.Errorf("POST %s: %d body %s has no \"code\": %q member", c.path, r.Status, r.Body, c.code)
		}
	}
}
