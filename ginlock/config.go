package ginlock

import (
	"log/slog"
	"time"

	"github.com/gin-gonic/gin"

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

// Config says how the middleware locks. Locker and Key are required; every
// other zero field takes httplock's default. The fields mean what they mean
// in httplock.Config.
type Config struct {
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
	// Scope names the lock space; empty means method + c.FullPath(). Routes
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
	// Respond writes the response for a request that does not reach the
	// handler (default: httplock.WriteProblem on c.Writer). The middleware
	// aborts the chain afterwards either way.
	Respond func(c *gin.Context, rej *httplock.Rejection)
	// Replay, when set, records the first response to each key and replays
	// it to later requests with the same key, as httplock.ReplayConfig
	// says; nil: off. A replayed request's chain is aborted.
	Replay *httplock.ReplayConfig
	// Telemetry, when set, turns on the middleware's OpenTelemetry metrics
	// and annotates each request's span, as httplock.Config.Telemetry says;
	// nil: off.
	Telemetry *core.Telemetry
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

// WriteProblem is the default Respond: httplock.WriteProblem on c.Writer.
func WriteProblem(c *gin.Context, rej *httplock.Rejection) {
	httplock.WriteProblem(c.Writer, c.Request, rej)
}
