package echolock

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/reqlock/reqlock/httplock"
)

// echoContext carries the echo.Context on the request the middleware gives
// Config.Lock.Key and Config.Lock.Respond.
var echoContext = httplock.NewFrameworkContext[echo.Context]("echolock")

// ContextOf returns the echo.Context of a request that echolock's
// middleware handed to the Key or Respond of its Config.Lock: for a KeyFunc
// or Respond of your own that needs Echo's context.
func ContextOf(r *http.Request) (echo.Context, bool) { return echoContext.From(r) }

// FromParam uses a route parameter: "id" in "/orders/:id".
func FromParam(name string) httplock.KeyFunc {
	return echoContext.Key("FromParam", func(c echo.Context) (string, error) { return c.Param(name), nil })
}

// FromContext uses a value that earlier middleware stored with c.Set,
// typically the user ID your auth middleware verified: the way to allow one
// request per user. It is httplock.FromContext for Echo: the value goes
// through httplock.KeyOf, and no value is httplock.ErrNoContextValue.
func FromContext(key string) httplock.KeyFunc {
	return echoContext.Value("FromContext", func(c echo.Context) any { return c.Get(key) })
}
