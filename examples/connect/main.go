// Command connect is a Connect service with reqlock: one order creation per
// user and idempotency key at a time, and a retry answered with the first
// response instead of a second order. The user comes from what the auth
// interceptor verified, the key from the client.
//
// It is a module of its own, like connectlock, so that the reqlock module
// never requires connect-go. From a clone:
//
//	cd examples/connect && go run .
//	curl -H 'Content-Type: application/json' -H 'Authorization: Bearer alice' \
//	     -H 'Idempotency-Key: k1' -d '"book"' http://127.0.0.1:8080/shop.v1.Orders/Create
//
// Send it twice: the second answer is the first order again, with
// Idempotent-Replayed: true. Send another body with the same key:
// failed_precondition. Send it twice at once: the second gets aborted.
// REDIS_URL=redis://127.0.0.1:6379 locks across instances.
package main

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/reqlock/reqlock/connectlock"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/examples/internal/storeenv"
	"github.com/reqlock/reqlock/httplock"
)

type userKey struct{}

// auth stands in for real authentication: it must verify the credential
// (a session, a signed token) before it trusts the user it names.
var auth = connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		user, ok := strings.CutPrefix(req.Header().Get("Authorization"), "Bearer ")
		if !ok || user == "" {
			return nil, connect.NewError(connect.CodeUnauthenticated, nil)
		}
		return next(context.WithValue(ctx, userKey{}, user), req)
	}
})

const createOrder = "/shop.v1.Orders/Create"

var orders atomic.Int64

func create(_ context.Context, req *connect.Request[wrapperspb.StringValue]) (*connect.Response[wrapperspb.StringValue], error) {
	time.Sleep(200 * time.Millisecond) // charge the card, write the order
	n := orders.Add(1)
	return connect.NewResponse(wrapperspb.String(fmt.Sprintf("order %d: %s", n, req.Msg.GetValue()))), nil
}

func main() {
	store, which, closeStore, err := storeenv.Open()
	if err != nil {
		log.Fatal(err)
	}
	defer closeStore()

	lock, err := connectlock.NewInterceptor(httplock.Config{
		Locker: core.NewLocker(store),
		// The verified user and the client's key: one client's key can
		// never fetch another's response.
		Key:         httplock.Join(httplock.FromContext(userKey{}), httplock.FromHeader("Idempotency-Key")),
		KeyRequired: true,
		Replay:      &httplock.ReplayConfig{},
	})
	if err != nil {
		log.Fatal(err)
	}
	onPanic := func(context.Context, connect.Spec, http.Header, any) error {
		return connect.NewError(connect.CodeInternal, nil)
	}
	mux := http.NewServeMux()
	// Recovery outside the lock, auth before it.
	mux.Handle(createOrder, connect.NewUnaryHandler(createOrder, create,
		connect.WithRecover(onPanic), connect.WithInterceptors(auth, lock)))

	log.Printf("listening on 127.0.0.1:8080 (%s)", which)
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", mux))
}
