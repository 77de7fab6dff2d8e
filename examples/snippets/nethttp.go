package snippets

import (
	"net/http"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
)

// NetHTTP is the README's net/http section: orders one at a time per user,
// payments once per user and Idempotency-Key.
func NetHTTP(locker *core.Locker) http.Handler {
	perUser := httplock.New(httplock.Config{
		Locker:  locker,
		Key:     httplock.FromContext(userKey{}), // the user your auth middleware verified
		Mode:    httplock.Wait,                   // duplicates queue (up to MaxWait) instead of 409
		MaxWait: 5 * time.Second,
	})
	payOnce := httplock.New(httplock.Config{
		Locker:      locker,
		Key:         httplock.Join(httplock.FromContext(userKey{}), httplock.IdempotencyKey()),
		KeyRequired: true,
		Replay:      &httplock.ReplayConfig{},
	})

	mux := http.NewServeMux()
	// Wrap each route's handler, not the mux: r.Pattern, the default scope, is set by routing.
	mux.Handle("POST /orders", auth(perUser(http.HandlerFunc(createOrder))))
	mux.Handle("POST /payments", auth(payOnce(http.HandlerFunc(pay))))
	return mux
}
