package connectlock_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/reqlock/reqlock/connectlock"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

// A unary procedure keyed by the client's idempotency key, with replay:
// a retry gets the first response, and the key sent with another request is
// refused.
func Example() {
	locker := core.NewLocker(memorystore.New()) // redisstore.New(client) across instances
	lock, err := connectlock.NewInterceptor(httplock.Config{
		Locker: locker,
		Key:    httplock.FromHeader("Idempotency-Key"),
		Replay: &httplock.ReplayConfig{},
	})
	if err != nil {
		panic(err)
	}
	orders := 0
	const procedure = "/shop.v1.Orders/Create"
	mux := http.NewServeMux()
	mux.Handle(procedure, connect.NewUnaryHandler(procedure,
		func(_ context.Context, req *connect.Request[wrapperspb.StringValue]) (*connect.Response[wrapperspb.StringValue], error) {
			orders++
			return connect.NewResponse(wrapperspb.String(fmt.Sprintf("order %d: %s", orders, req.Msg.GetValue()))), nil
		},
		connect.WithInterceptors(lock)))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	client := connect.NewClient[wrapperspb.StringValue, wrapperspb.StringValue](srv.Client(), srv.URL+procedure)
	create := func(item string) {
		req := connect.NewRequest(wrapperspb.String(item))
		req.Header().Set("Idempotency-Key", "8e03978e")
		res, err := client.CallUnary(context.Background(), req)
		if err != nil {
			fmt.Println(connect.CodeOf(err))
			return
		}
		fmt.Println(res.Msg.GetValue(), "replayed:", res.Header().Get(connectlock.HeaderReplayed) == "true")
	}
	create("book")
	create("book") // a retry
	create("lamp") // the same key for another order
	// Output:
	// order 1: book replayed: false
	// order 1: book replayed: true
	// failed_precondition
}
