package echolock

import (
	"log/slog"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
)

// Mode says what a duplicate request does: Reject or Wait.
type Mode = httplock.Mode

// The modes, as in httplock.
const (
	// Reject answers a duplicate in flight at once with 409 and Retry-After.
	Reject = httplock.Reject
	// Wait queues a duplicate for up to MaxWait, then runs it.
	Wait = httplock.Wait
)

// Config is the middleware's configuration, in Echo's style: zero fields
// take the defaults (DefaultConfig, then httplock's). Locker and Key are
// required. The locking fields mean what they mean in httplock.Config.
type Config struct {
	// Skipper skips the middleware for some requests: they run unlocked.
	Skipper middleware.Skipper
	// BeforeFunc runs before the key is extracted.
	BeforeFunc middleware.BeforeFunc
	// ErrorHandler turns a rejection (a *httplock.Rejection) into the error
	// the middleware returns (default DefaultErrorHandler: an
	// *echo.HTTPError for the app's error handler to render).
	ErrorHandler func(c echo.Context, err error) error

	// Locker takes the locks. Share one per store across middlewares.
	Locker *core.Locker
	// Key extracts the raw key; "" means no key (see KeyRequired).
	Key KeyFunc
	// Mode is Reject (the default) or Wait.
	Mode Mode
	// MaxWait bounds the whole time a request spends getting its key in
	// Wait mode, the first attempt included (default 5s).
	MaxWait time.Duration
	// WaitBodyLimit is how many bytes of a request's body Wait mode reads
	// into memory before the request waits (default 64 KiB; negative:
	// none), so that a client that leaves while it waits is noticed.
	WaitBodyLimit int64
	// MaxWaiters caps the requests waiting for one key in this middleware
	// on this instance (default 64; negative: no cap); one more gets 429.
	MaxWaiters int
	// RetryAfter is the Retry-After hint (default 1s), never more than the
	// holder's remaining lease.
	RetryAfter time.Duration
	// Scope names the lock space; empty means method + c.Path(). Routes
	// with the same Scope share one lock per key.
	Scope string
	// KeyRequired answers a request without a key instead of running it
	// unlocked: 400 when the client sent none, 500 (the server's fault)
	// when FromContext found no value, as httplock.Config.KeyRequired says.
	KeyRequired bool
	// FailOpen runs the handler unlocked when the store is unavailable;
	// otherwise 503. Either way a warning is logged once per burst per
	// Logger, shared by the routes that share the Logger.
	FailOpen bool
	// StoreTimeout bounds each store call (default 1s); in Wait mode, each
	// attempt within MaxWait.
	StoreTimeout time.Duration
	// Logger receives the store, release and key warnings and errors
	// (default slog.Default()).
	Logger *slog.Logger
	// Replay, when set, records the first response to each key and replays
	// it to later requests with the same key, as httplock.ReplayConfig
	// says; nil: off. A handler's error is rendered (c.Error) while the
	// response is recorded, so the answer the app's error handler gives is
	// the one replayed.
	Replay *httplock.ReplayConfig
	// Telemetry, when set, turns on the middleware's OpenTelemetry metrics
	// and annotates each request's span, as httplock.Config.Telemetry says;
	// nil: off.
	Telemetry *core.Telemetry
}

// DefaultConfig holds the defaults New starts from.
var DefaultConfig = Config{
	Skipper:      middleware.DefaultSkipper,
	ErrorHandler: DefaultErrorHandler,
	Mode:         Reject,
}

func (c Config) engineConfig() httplock.Config {
	return httplock.Config{
		Locker:        c.Locker,
		Mode:          c.Mode,
		MaxWait:       c.MaxWait,
		WaitBodyLimit: c.WaitBodyLimit,
		MaxWaiters:    c.MaxWaiters,
		RetryAfter:    c.RetryAfter,
		Scope:         c.Scope,
		KeyRequired:   c.KeyRequired,
		FailOpen:      c.FailOpen,
		StoreTimeout:  c.StoreTimeout,
		Logger:        c.Logger,
		Replay:        c.Replay,
		Telemetry:     c.Telemetry,
	}
}
