package ginlock

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/reqlock/reqlock/httplock"
)

// ginContext carries the *gin.Context on the request the middleware gives
// Config.Key and Config.Respond.
var ginContext = httplock.NewFrameworkContext[*gin.Context]("ginlock")

// ContextOf returns the *gin.Context of a request that ginlock's middleware
// handed to Config.Key or Config.Respond: for a KeyFunc or Respond of your
// own that needs Gin's context.
func ContextOf(r *http.Request) (*gin.Context, bool) { return ginContext.From(r) }

// FromParam uses a route parameter: "id" in "/orders/:id".
func FromParam(name string) httplock.KeyFunc {
	return ginContext.Key("FromParam", func(c *gin.Context) (string, error) { return c.Param(name), nil })
}

// FromContext uses a value that earlier middleware stored with c.Set,
// typically the user ID your auth middleware verified: the way to allow one
// request per user. It is httplock.FromContext for Gin: the value goes
// through httplock.KeyOf, and no value is httplock.ErrNoContextValue.
func FromContext(key string) httplock.KeyFunc {
	return ginContext.Value("FromContext", func(c *gin.Context) any { v, _ := c.Get(key); return v })
}
