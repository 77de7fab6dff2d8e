package snippets

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
)

// Middleware is docs/configuration.md's middleware settings, each at its
// default but for FailOpen.
func Middleware(locker *core.Locker) func(http.Handler) http.Handler {
	return httplock.New(httplock.Config{
		Locker:        locker,
		Key:           httplock.FromContext(userKey{}),
		Mode:          httplock.Wait,
		Limit:         1,               // requests of a key at once; > 1: one more gets 429 or waits
		MaxWait:       5 * time.Second, // the whole wait, first attempt included; then 409
		MaxWaiters:    64,              // waiting for one key on this instance; one more gets 429
		StoreTimeout:  time.Second,     // each store round trip; past it the store is unavailable
		RetryAfter:    time.Second,     // the hint in Retry-After, cut to the holder's lease
		WaitBodyLimit: 64 << 10,        // body read ahead so a client that leaves is noticed
		FailOpen:      true,            // store unavailable: run unlocked and warn, instead of 503
		Logger:        slog.Default(),
	})
}
