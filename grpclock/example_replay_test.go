package grpclock_test

import (
	"context"
	"fmt"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	grpchealth "google.golang.org/grpc/health"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/grpclock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

// Unary calls keyed by the client's idempotency key, with replay: a retry
// gets the first response with idempotent-replayed: true, and the key sent
// with another request is refused.
func ExampleUnaryServerInterceptor_replay() {
	srv := grpc.NewServer(grpc.UnaryInterceptor(grpclock.UnaryServerInterceptor(httplock.Config{
		Locker: core.NewLocker(memorystore.New()), // redisstore.New(client) across instances
		Key:    httplock.FromHeader("idempotency-key"),
		Replay: &httplock.ReplayConfig{},
	})))
	grpc_health_v1.RegisterHealthServer(srv, grpchealth.NewServer())
	lis, _ := net.Listen("tcp", "127.0.0.1:0")
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()
	conn, _ := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	defer conn.Close()

	ctx := metadata.AppendToOutgoingContext(context.Background(), "idempotency-key", "8e03978e")
	check := func(service string) {
		var header metadata.MD
		resp, err := grpc_health_v1.NewHealthClient(conn).Check(ctx, &grpc_health_v1.HealthCheckRequest{Service: service}, grpc.Header(&header))
		if err != nil {
			fmt.Println(status.Code(err))
			return
		}
		fmt.Println(resp.GetStatus(), header.Get(grpclock.HeaderReplayed))
	}
	check("")       // runs
	check("")       // a retry: replayed
	check("orders") // the same key with another request
	// Output:
	// SERVING []
	// SERVING [true]
	// FailedPrecondition
}
