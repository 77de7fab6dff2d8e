package connectlock_test

import (
	"context"
	"net/http"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/reqlock/reqlock/connectlock"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

type userKey struct{}

// Where the interceptor goes among a handler's options: after recovery, so
// that a handler's panic releases the lock and then reaches recovery, and
// after auth, so that FromContext finds the user.
func Example_chain() {
	locker := core.NewLocker(memorystore.New()) // redisstore.New(client) across instances

	// Yours:
	auth := connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc { return next })
	onPanic := func(context.Context, connect.Spec, http.Header, any) error {
		return connect.NewError(connect.CodeInternal, nil)
	}
	mux := http.NewServeMux()
	create := func(_ context.Context, req *connect.Request[wrapperspb.StringValue]) (*connect.Response[wrapperspb.StringValue], error) {
		return connect.NewResponse(req.Msg), nil
	}

	lock, err := connectlock.NewInterceptor(httplock.Config{
		Locker:      locker,
		Key:         httplock.Join(httplock.FromContext(userKey{}), httplock.FromHeader("Idempotency-Key")),
		KeyRequired: true,
		Replay:      &httplock.ReplayConfig{},
	})
	if err != nil {
		panic(err) // wraps httplock.ErrInvalidConfig
	}
	mux.Handle("/shop.v1.Orders/Create", connect.NewUnaryHandler("/shop.v1.Orders/Create", create,
		connect.WithRecover(onPanic), connect.WithInterceptors(auth, lock)))
	// Output:
}
