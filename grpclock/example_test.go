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

type exampleUser struct{}

// One call per user at a time; the user comes from the auth interceptor,
// not from anything the client sends.
func Example() {
	locker := core.NewLocker(memorystore.New()) // redisstore.New(client) across instances

	auth := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		if tok := md.Get("authorization"); len(tok) == 1 && tok[0] == "Bearer token-of-alice" {
			ctx = context.WithValue(ctx, exampleUser{}, "alice")
		}
		return next(ctx, req)
	}
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(auth,
		grpclock.UnaryServerInterceptor(httplock.Config{
			Locker:      locker,
			Key:         httplock.FromContext(exampleUser{}),
			KeyRequired: true,
		})))
	grpc_health_v1.RegisterHealthServer(srv, grpchealth.NewServer())
	lis, _ := net.Listen("tcp", "127.0.0.1:0")
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	conn, _ := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer token-of-alice")

	// A duplicate while alice's call runs: what the interceptor answers.
	held, _ := locker.TryObtain(ctx, httplock.LockKey("/grpc.health.v1.Health/Check", "alice"))
	_, err := grpc_health_v1.NewHealthClient(conn).Check(ctx, &grpc_health_v1.HealthCheckRequest{})
	fmt.Println(status.Code(err))
	_ = held.Release(ctx)

	resp, err := grpc_health_v1.NewHealthClient(conn).Check(ctx, &grpc_health_v1.HealthCheckRequest{})
	fmt.Println(resp.GetStatus(), err)
	// Output:
	// Aborted
	// SERVING <nil>
}
