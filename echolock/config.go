package echolock

import (
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/reqlock/reqlock/httplock"
)

// Config is the middleware's configuration in Echo's style: Echo's own
// fields, and Lock, the route's settings as httplock.Config says them. Zero
// fields take the defaults (DefaultConfig, then httplock's).
type Config struct {
	// Skipper skips the middleware for some requests: they run unlocked.
	Skipper middleware.Skipper
	// BeforeFunc runs before the key is extracted.
	BeforeFunc middleware.BeforeFunc
	// ErrorHandler turns a rejection, once Lock.Respond has answered it,
	// into the error the middleware returns, for Echo's logger and outer
	// middleware (default DefaultErrorHandler). nil from it: none.
	ErrorHandler func(c echo.Context, err error) error
	// Lock is how the route locks. Key is httplock's (FromHeader,
	// IdempotencyKey, …) or Echo's (FromContext, FromParam); Respond writes
	// to c.Response() (ContextOf finds the echo.Context).
	Lock httplock.Config
}

// DefaultConfig holds the defaults WithConfig starts from.
var DefaultConfig = Config{
	Skipper:      middleware.DefaultSkipper,
	ErrorHandler: DefaultErrorHandler,
}
