package echo5lock

import (
	"fmt"

	"github.com/labstack/echo/v5"
	"github.com/labstack/echo/v5/middleware"

	"github.com/reqlock/reqlock/httplock"
)

// Config is the middleware's configuration, in Echo v5's style: zero fields
// take the defaults (DefaultConfig, then httplock's). Key and Locker are
// required.
type Config struct {
	// Skipper skips the middleware for some requests: they run unlocked.
	Skipper middleware.Skipper
	// BeforeFunc runs before the key is extracted.
	BeforeFunc middleware.BeforeFunc
	// ErrorHandler turns a rejection (a *httplock.Rejection) into the error
	// the middleware returns (default DefaultErrorHandler: an
	// *echo.HTTPError for the app's error handler to render).
	ErrorHandler func(c *echo.Context, err error) error
	// Key extracts the raw key; "" means no key (see KeyRequired).
	Key KeyFunc

	// Config holds the locking fields (Locker, Mode, MaxWait, Scope,
	// FailOpen, Telemetry, …), which mean what they mean in httplock; an
	// empty Scope is method + c.Path(). Embedded so that every option the engine gains is
	// an option here too. Its Key and Respond are for net/http and must stay
	// nil: set Key and ErrorHandler above.
	httplock.Config
}

// DefaultConfig holds the defaults New starts from.
var DefaultConfig = Config{
	Skipper:      middleware.DefaultSkipper,
	ErrorHandler: DefaultErrorHandler,
}

// withDefaults fills the Echo fields and checks what httplock.NewEngine does
// not.
func (c Config) withDefaults() (Config, error) {
	switch {
	case c.Key == nil:
		return c, fmt.Errorf("echo5lock: Config.Key is nil: %w", httplock.ErrInvalidConfig)
	case c.Config.Key != nil, c.Config.Respond != nil:
		return c, fmt.Errorf("echo5lock: Config.Config.Key and Config.Config.Respond must be nil (set Key and ErrorHandler): %w", httplock.ErrInvalidConfig)
	}
	if c.Skipper == nil {
		c.Skipper = DefaultConfig.Skipper
	}
	if c.ErrorHandler == nil {
		c.ErrorHandler = DefaultConfig.ErrorHandler
	}
	return c, nil
}
