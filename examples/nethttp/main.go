// Command nethttp is the smallest real net/http server with reqlock: one
// order creation per user at a time, the user taken from what the auth
// middleware verified.
//
//	go run ./examples/nethttp
//	curl -X POST -H 'Authorization: Bearer alice' http://127.0.0.1:8080/orders
package main

import (
	"context"
	"log"
	"net/http"
	"strings"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/examples/internal/storeenv"
	"github.com/reqlock/reqlock/httplock"
)

type userKey struct{}

// auth stands in for real authentication: it must verify the credential
// (a session, a signed token) before it trusts the user it names.
func auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || user == "" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, user)))
	})
}

func createOrder(w http.ResponseWriter, r *http.Request) {
	time.Sleep(200 * time.Millisecond) // charge the card, write the order
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write([]byte("order created\n"))
}

func main() {
	store, which, closeStore, err := storeenv.Open()
	if err != nil {
		log.Fatal(err)
	}
	defer closeStore()

	oneAtATime := httplock.New(httplock.Config{
		Locker: core.NewLocker(store),
		Key:    httplock.FromContext(userKey{}), // the verified user, never a client header
	})

	mux := http.NewServeMux()
	// Wrap the route's handler, not the mux: r.Pattern, the default scope,
	// is only set inside the route.
	mux.Handle("POST /orders", oneAtATime(http.HandlerFunc(createOrder)))

	log.Printf("listening on 127.0.0.1:8080 (%s)", which)
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", auth(mux)))
}
