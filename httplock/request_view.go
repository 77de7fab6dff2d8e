package httplock

import (
	"context"
	"fmt"
	"net/http"
)

// RequestView is a request that is not net/http's, as httplock's key
// functions read it: an adapter on another request type (Fiber, on
// fasthttp) implements it over its own request, so that FromHeader,
// FromQuery, IdempotencyKey and StrictIdempotencyKey work there unchanged
// and no *http.Request is built from the request's headers.
type RequestView interface {
	// HeaderValues returns the values of the request header name (given in
	// canonical form), one per line as sent, or none.
	HeaderValues(name string) []string
	// RawQuery returns the query string as sent, without the '?'.
	RawQuery() string
}

// View returns the request that an adapter on another request type hands
// to Config.Key, Config.Respond and the Engine in place of an
// *http.Request: it carries ctx, the method, c (for the adapter's key
// functions and From) and v (for httplock's), and nothing else. Its Header
// is nil, which is how httplock's key functions tell it apart; URL and Body
// are nil unless the adapter sets them (replay fingerprints them). A
// KeyFunc of your own reads the framework's request through the adapter's
// ContextOf. FromPathValue, which reads net/http's ServeMux wildcards,
// reports ErrKeyMisconfigured on it: use the adapter's FromParam.
func (f *FrameworkContext[C]) View(ctx context.Context, method string, c C, v RequestView) *http.Request {
	r := http.Request{Method: method}
	return r.WithContext(&viewContext[C]{Context: ctx, f: f, c: c, v: v})
}

// viewContext holds a View's framework context and request view in one
// context value, one allocation for both.
type viewContext[C any] struct {
	context.Context
	f *FrameworkContext[C]
	c C
	v RequestView
}

type viewKey struct{}

func (x *viewContext[C]) Value(key any) any {
	switch key {
	case viewKey{}:
		return x.v
	case any(x.f):
		return x.c
	}
	return x.Context.Value(key)
}

// viewOf returns the view r carries, if it is a View. A request net/http
// serves always has a Header, so it costs net/http nothing.
func viewOf(r *http.Request) (RequestView, bool) {
	if r.Header != nil {
		return nil, false
	}
	v, ok := r.Context().Value(viewKey{}).(RequestView)
	return v, ok
}

// headerValues returns the lines of header name (canonical) in r.
func headerValues(r *http.Request, name string) []string {
	if v, ok := viewOf(r); ok {
		return v.HeaderValues(name)
	}
	return r.Header[name]
}

// rawQuery returns r's query string as sent.
func rawQuery(r *http.Request) string {
	if v, ok := viewOf(r); ok {
		return v.RawQuery()
	}
	return r.URL.RawQuery
}

// errPathValueOnView is FromPathValue under an adapter that is not on
// net/http: it would find no wildcard and lock nothing.
var errPathValueOnView = fmt.Errorf("%w: httplock.FromPathValue reads net/http's ServeMux wildcards; use the adapter's FromParam", ErrKeyMisconfigured)
