package httpload

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
)

// KeyHeader is the header the hostile routes take their key from.
const KeyHeader = "X-Key"

// HostileRoutes are the routes hostile requests go to, one per key source
// and a Wait-mode one, each locking with l and running h.
func HostileRoutes(l *core.Locker, h http.Handler) []httpcases.Route {
	reject := httplock.Config{Locker: l, Logger: quiet}
	wait := httplock.Config{Locker: l, Logger: quiet, Mode: httplock.Wait, MaxWait: 100 * time.Millisecond, MaxWaiters: 2}
	return []httpcases.Route{
		{Method: "POST", Path: "/h", Lock: reject, Key: httpcases.KeySource{Kind: httpcases.FromHeader, Name: KeyHeader}, Handler: h},
		{Method: "POST", Path: "/q", Lock: reject, Key: httpcases.KeySource{Kind: httpcases.FromQuery, Name: "k"}, Handler: h},
		{Method: "POST", Path: "/p/{id}", Lock: reject, Key: httpcases.KeySource{Kind: httpcases.FromParam, Name: "id"}, Handler: h},
		{Method: "POST", Path: "/i", Lock: reject, Key: httpcases.KeySource{Kind: httpcases.FromIdempotencyKey}, Handler: h},
		{Method: "POST", Path: "/w", Lock: wait, Key: httpcases.KeySource{Kind: httpcases.FromHeader, Name: KeyHeader}, Handler: h},
	}
}

// hostilePool are keys sent again and again, so that hostile keys also
// meet each other in flight.
var hostilePool = []string{
	"{a}", "}{", "*", "KEYS *", "reqlock:{x}:fence", "\xff\xfe\xfd", "ключ🔑", "%00", "a b", `"quoted"`,
	strings.Repeat("{", 1024), strings.Repeat("é", 512),
}

// hostileText is n bytes or a few more of hostile text: braces, globs, quotes,
// separators, %-escapes, invalid UTF-8 and multi-byte runes.
func hostileText(rnd *rand.Rand, n int, allow func(byte) bool) string {
	const special = "{}*:;%\"\\ ,=&?#/.\t'<>$!@[]"
	var b strings.Builder
	for b.Len() < n {
		var c byte
		switch rnd.IntN(4) {
		case 0:
			c = special[rnd.IntN(len(special))]
		case 1:
			c = byte(0x80 + rnd.IntN(0x80)) // invalid UTF-8 on its own
		case 2:
			if rnd.IntN(2) == 0 {
				b.WriteString("ключ🔑")
				continue
			}
			c = byte(rnd.IntN(0x20)) // control bytes, where the source allows them
		default:
			c = byte(0x20 + rnd.IntN(0x5f))
		}
		if allow(c) {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// hostileLen is a key length: mostly short, some at the 1 KiB limit, some
// past it.
func hostileLen(rnd *rand.Rand) int {
	switch rnd.IntN(10) {
	case 0:
		return httplock.MaxKeyLen - 4 + rnd.IntN(9)
	case 1:
		return 2000 + rnd.IntN(2000)
	}
	return 1 + rnd.IntN(40)
}

// headerByte: what a client may put in a header value (RFC 9110 field
// content: no control bytes but HTAB).
func headerByte(c byte) bool { return c == '\t' || (c >= 0x20 && c != 0x7f) }

func anyByte(byte) bool { return true }

// pathByte leaves out what would change the route rather than the key:
// '/' (Gin and Echo route on the decoded path).
func pathByte(c byte) bool { return c != '/' }

// Hostile returns a hostile request to base: one of the HostileRoutes, a
// key that is hostile text (sometimes from a shared pool), missing, empty,
// sent twice, too long or malformed, and a Want that knows which of those
// must get 400 and which may run.
func Hostile(rnd *rand.Rand, base string) Request {
	raw := func(allow func(byte) bool) string {
		if rnd.IntN(3) == 0 {
			return hostilePool[rnd.IntN(len(hostilePool))]
		}
		return hostileText(rnd, hostileLen(rnd), allow)
	}
	var (
		path, rawQuery string
		hdr            = http.Header{}
		bad            bool   // the request must get 400
		key            string // the key the middleware should see, "" for none
	)
	switch rnd.IntN(5) {
	case 0, 4: // a header, on the Reject route or the Wait one
		path = "/h"
		if rnd.IntN(5) == 4 {
			path = "/w"
		}
		switch rnd.IntN(10) {
		case 0: // none: runs unlocked
		case 1:
			hdr[KeyHeader] = []string{"a", "b"}
			bad = true
		default:
			v := raw(headerByte)
			hdr[KeyHeader] = []string{v}
			key = strings.Trim(v, " \t") // the server trims what surrounds a field value
			bad = key == "" || len(key) > httplock.MaxKeyLen
		}
	case 1:
		path = "/q"
		switch rnd.IntN(10) {
		case 0:
			rawQuery = "other=1"
		case 1:
			rawQuery = []string{"k=%zz", "k=a;b", "k=1&k=2", "k=", "k=%"}[rnd.IntN(5)]
		default:
			rawQuery = "k=" + url.QueryEscape(raw(anyByte))
		}
		q, err := url.ParseQuery(rawQuery)
		switch vs := q["k"]; {
		case err != nil, len(vs) > 1:
			bad = true
		case len(vs) == 1:
			key = vs[0]
			bad = key == "" || len(key) > httplock.MaxKeyLen
		}
	case 2:
		// Lengths well inside or well past the limit: frameworks differ in
		// whether a parameter comes %-decoded, and so in its length.
		v := hostilePool[rnd.IntN(len(hostilePool)-2)]
		switch rnd.IntN(4) {
		case 0:
			v = hostileText(rnd, 1+rnd.IntN(300), pathByte)
		case 1:
			v = hostileText(rnd, 1100+rnd.IntN(500), pathByte)
		}
		if v == "." || v == ".." {
			v += "x"
		}
		path = "/p/" + url.PathEscape(v)
		key = v
		bad = len(v) > httplock.MaxKeyLen
	case 3:
		path = "/i"
		v := idempotencyValue(rnd, raw)
		hdr[httplock.HeaderIdempotencyKey] = []string{v}
		k, err := httplock.ParseIdempotencyKeyLenient(strings.Trim(v, " \t"))
		key = k
		bad = err != nil || len(k) > httplock.MaxKeyLen
	}
	u := base + path
	if rawQuery != "" {
		u += "?" + rawQuery
	}
	req, err := http.NewRequest("POST", u, nil)
	if err != nil {
		panic(fmt.Sprintf("httpload: building %q: %v", u, err))
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	label := ""
	if key != "" && !bad {
		label = path[:2] + "\x00" + key
	}
	wait := path == "/w"
	return Request{Req: req, Label: label, Want: func(status int) error {
		switch {
		case bad && status != http.StatusBadRequest:
			return fmt.Errorf("%d for a key that must get 400", status)
		case bad:
			return nil
		case key == "" && status != http.StatusOK:
			return fmt.Errorf("%d for a request without a key, which runs unlocked", status)
		case status == http.StatusOK, status == http.StatusConflict:
			return nil
		case wait && status == http.StatusTooManyRequests:
			return nil
		}
		return fmt.Errorf("%d for a valid key", status)
	}}
}

// idempotencyValue is an Idempotency-Key field value: a structured-field
// string with hostile content, or something that is not one.
func idempotencyValue(rnd *rand.Rand, raw func(func(byte) bool) string) string {
	printable := func(c byte) bool { return c >= 0x20 && c < 0x7f }
	switch rnd.IntN(8) {
	case 0:
		return raw(headerByte) // rarely a valid sf-string
	case 1:
		odd := []string{`"a", "b"`, `"a`, `a"`, `"\x"`, `12`, `?1`, `""`, `"é"`, `:YQ==:`, `"a";p=1`, ` "a" `}
		return odd[rnd.IntN(len(odd))]
	}
	s := raw(printable)
	s = strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
	return `"` + s + `"`
}

// quiet drops the middleware's warnings: hostile input is the point here.
var quiet = slog.New(slog.DiscardHandler)
