// Command grpc is a gRPC service with reqlock, and a client that shows what
// its callers get: one order creation per user and idempotency key at a
// time, and a retry answered with the first response instead of a second
// order. The user comes from what the auth interceptor verified, the key
// from the client's metadata.
//
// It is a module of its own, like grpclock, so that the reqlock module
// never requires grpc-go. From a clone:
//
//	cd examples/grpc && go run .
//
// REDIS_URL=redis://127.0.0.1:6379 locks across instances.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/examples/internal/storeenv"
	"github.com/reqlock/reqlock/grpclock"
	"github.com/reqlock/reqlock/httplock"
)

type userKey struct{}

// auth stands in for real authentication: it must verify the credential
// (a session, a signed token) before it trusts the user it names.
func auth(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	users := md.Get("authorization")
	if len(users) != 1 || users[0] == "" {
		return nil, status.Error(codes.Unauthenticated, "no user")
	}
	return next(context.WithValue(ctx, userKey{}, users[0]), req)
}

// recovery answers a handler's panic with Internal; it sits outside the
// lock, which is released first.
func recovery(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if recover() != nil {
			err = status.Error(codes.Internal, "internal error")
		}
	}()
	return next(ctx, req)
}

var (
	orders  atomic.Int64
	entered = make(chan struct{}, 1) // a call reached create
)

// create takes a while, as charging a card and writing an order do.
func create(_ context.Context, item *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
	select {
	case entered <- struct{}{}:
	default:
	}
	time.Sleep(200 * time.Millisecond)
	return wrapperspb.String(fmt.Sprintf("order %d: %s", orders.Add(1), item.GetValue())), nil
}

// service is shop.v1.Orders, described by hand so that the example needs
// no generated code: Create takes and returns a StringValue.
var service = grpc.ServiceDesc{
	ServiceName: "shop.v1.Orders",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Create",
		Handler: func(_ any, ctx context.Context, dec func(any) error, icpt grpc.UnaryServerInterceptor) (any, error) {
			in := new(wrapperspb.StringValue)
			if err := dec(in); err != nil {
				return nil, err
			}
			info := &grpc.UnaryServerInfo{FullMethod: "/shop.v1.Orders/Create"}
			return icpt(ctx, in, info, func(ctx context.Context, req any) (any, error) {
				return create(ctx, req.(*wrapperspb.StringValue))
			})
		},
	}},
}

func main() {
	if err := run(os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run serves the service on a free loopback port and calls it as a client
// would, writing what each call got to w.
func run(w io.Writer) error {
	orders.Store(0)
	select { // a signal left by an earlier run
	case <-entered:
	default:
	}
	store, which, closeStore, err := storeenv.Open()
	if err != nil {
		return err
	}
	defer closeStore()

	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(recovery, auth, grpclock.UnaryServerInterceptor(httplock.Config{
		Locker: core.NewLocker(store),
		// The verified user and the client's key: one client's key can
		// never fetch another's response.
		Key:         httplock.Join(httplock.FromContext(userKey{}), httplock.FromHeader("idempotency-key")),
		KeyRequired: true,
		Replay:      &httplock.ReplayConfig{},
	})))
	srv.RegisterService(&service, nil)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()
	log.Printf("serving on %s (%s)", lis.Addr(), which)

	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	key := fmt.Sprintf("k-%d", time.Now().UnixNano()) // a new key each run
	var mu sync.Mutex
	call := func(what, item string) {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "alice", "idempotency-key", key)
		out := new(wrapperspb.StringValue)
		var header metadata.MD
		err := conn.Invoke(ctx, "/shop.v1.Orders/Create", wrapperspb.String(item), out, grpc.Header(&header))
		mu.Lock() // two calls answer at once
		defer mu.Unlock()
		switch {
		case err != nil:
			fmt.Fprintf(w, "%-26s %s: %s\n", what, status.Code(err), status.Convert(err).Message())
		case len(header.Get(grpclock.HeaderReplayed)) > 0:
			fmt.Fprintf(w, "%-26s %q, replayed\n", what, out.GetValue())
		default:
			fmt.Fprintf(w, "%-26s %q\n", what, out.GetValue())
		}
	}

	var wg sync.WaitGroup
	wg.Go(func() { call("first call", "book") })
	<-entered
	call("duplicate while it runs", "book") // Aborted, with RetryInfo
	wg.Wait()
	call("retry after it ended", "book")     // the first response again
	call("same key, another request", "pen") // FailedPrecondition
	_, err = fmt.Fprintf(w, "orders created: %d\n", orders.Load())
	return err
}
