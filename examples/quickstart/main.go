// Command quickstart is the program at the top of the README: POST /payments
// runs once per user and Idempotency-Key at a time, on every instance that
// shares the Redis, and a retry gets the first response again.
//
//	go run ./examples/quickstart   # needs Redis on localhost:6379
//	curl -i -X POST -H 'Idempotency-Key: pay-1' http://127.0.0.1:8080/payments
package main

import (
	"context"
	"net/http"

	"github.com/redis/go-redis/v9"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/redisstore"
)

type userKey struct{}

func main() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true, DialerRetries: 1})
	once := httplock.New(httplock.Config{
		Locker:      core.NewLocker(redisstore.New(rdb)),
		Key:         httplock.Join(httplock.FromContext(userKey{}), httplock.IdempotencyKey()),
		KeyRequired: true,                     // no Idempotency-Key: 400, never run unlocked
		Replay:      &httplock.ReplayConfig{}, // a retry gets the first response again
	})
	http.Handle("POST /payments", auth(once(http.HandlerFunc(pay))))
	http.ListenAndServe(":8080", nil)
}

func pay(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusCreated) }

func auth(next http.Handler) http.Handler { // yours: it puts the verified user on the context
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, "user-42")))
	})
}
