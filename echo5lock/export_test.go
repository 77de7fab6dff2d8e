package echo5lock

import (
	"net/http"

	"github.com/labstack/echo/v5"
)

// Carrying is c.Request() as the middleware hands it to Config.Lock.Key.
func Carrying(c *echo.Context) *http.Request { return echoContext.With(c.Request(), c) }
