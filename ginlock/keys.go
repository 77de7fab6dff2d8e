package ginlock

import (
	"github.com/gin-gonic/gin"

	"github.com/reqlock/reqlock/httplock"
)

// KeyFunc extracts the raw lock key from a request. "" means no key; an
// error is answered with 400.
type KeyFunc func(c *gin.Context) (string, error)

// FromHeader uses a request header: for idempotency keys and demos, never
// to say who the user is (the client chooses it). More than one line of the
// header, or an empty one, is an error.
func FromHeader(name string) KeyFunc { return fromRequest(httplock.FromHeader(name)) }

// FromQuery uses a URL query parameter. Given more than once or empty, or
// in a query string that cannot be parsed, it is an error (as in httplock).
func FromQuery(name string) KeyFunc { return fromRequest(httplock.FromQuery(name)) }

// IdempotencyKey uses the Idempotency-Key header, quoted as the IETF draft
// says ("pay-1") or plain (pay-1), as httplock.IdempotencyKey does.
func IdempotencyKey() KeyFunc { return fromRequest(httplock.IdempotencyKey()) }

// StrictIdempotencyKey uses the Idempotency-Key header as a quoted
// structured-field string only, as httplock.StrictIdempotencyKey does: an
// unquoted value is an error (400).
func StrictIdempotencyKey() KeyFunc { return fromRequest(httplock.StrictIdempotencyKey()) }

// FromParam uses a route parameter: "id" in "/orders/:id".
func FromParam(name string) KeyFunc {
	return func(c *gin.Context) (string, error) { return c.Param(name), nil }
}

// FromContext uses a value that earlier middleware stored with c.Set,
// typically the user ID your auth middleware verified: the way to allow one
// request per user. The value goes through httplock.KeyOf (a type it cannot
// use is answered 500); no value is httplock.ErrNoContextValue, taken as no
// key and warned about once per middleware, or answered 500
// (key_misconfigured, logged as an error) with KeyRequired.
func FromContext(key string) KeyFunc {
	return func(c *gin.Context) (string, error) {
		v, _ := c.Get(key)
		if v == nil {
			return "", httplock.ErrNoContextValue
		}
		return httplock.KeyOf(v)
	}
}

// FirstOf is the first non-empty key of fns (see httplock.FirstOf).
func FirstOf(fns ...KeyFunc) KeyFunc { return httplock.FirstOf(fns...) }

// Join combines the keys of fns into one (see httplock.Join).
func Join(fns ...KeyFunc) KeyFunc { return httplock.Join(fns...) }

// fromRequest runs a net/http extractor on the request, so that header and
// query rules are httplock's, not a copy.
func fromRequest(f httplock.KeyFunc) KeyFunc {
	return func(c *gin.Context) (string, error) { return f(c.Request) }
}
