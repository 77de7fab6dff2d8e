package fiberlock

import (
	"net/http"

	"github.com/gofiber/fiber/v3"
	"github.com/valyala/fasthttp"

	"github.com/reqlock/reqlock/httplock"
)

// fiberContext carries the fiber.Ctx on the request the middleware gives
// Config.Key and Config.Respond.
var fiberContext = httplock.NewFrameworkContext[fiber.Ctx]("fiberlock")

// ContextOf returns the fiber.Ctx of a request that fiberlock's middleware
// handed to Config.Key or Config.Respond: for a KeyFunc or Respond of your
// own. That request is not net/http's: it has no Header, URL or Body, so
// read the request through the fiber.Ctx.
func ContextOf(r *http.Request) (fiber.Ctx, bool) { return fiberContext.From(r) }

// FromParam uses a route parameter: "id" in "/orders/:id".
func FromParam(name string) httplock.KeyFunc {
	return fiberContext.Key("FromParam", func(c fiber.Ctx) (string, error) { return c.Params(name), nil })
}

// FromLocals uses a value that earlier middleware stored with c.Locals,
// typically the user ID your auth middleware verified: the way to allow one
// request per user. The value goes through httplock.KeyOf, and no value is
// httplock.ErrNoContextValue, as for httplock.FromContext (which reads
// c.Context(), also usable here).
func FromLocals(key any) httplock.KeyFunc {
	return fiberContext.Value("FromLocals", func(c fiber.Ctx) any { return c.Locals(key) })
}

// view is the request as httplock's key functions (FromHeader, FromQuery,
// IdempotencyKey) read it: fasthttp's own, with no conversion. One pointer,
// so that making it an httplock.RequestView allocates nothing.
type view struct{ r *fasthttp.Request }

// HeaderValues returns the lines of a request header, copied out of
// fasthttp's buffers.
func (v view) HeaderValues(name string) []string {
	lines := v.r.Header.PeekAll(name)
	if len(lines) == 0 {
		return nil
	}
	vs := make([]string, len(lines))
	for i, l := range lines {
		vs[i] = string(l)
	}
	return vs
}

// RawQuery returns the query string as sent.
func (v view) RawQuery() string { return string(v.r.URI().QueryString()) }
