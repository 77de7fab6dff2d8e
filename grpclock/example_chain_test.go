package grpclock_test

import (
	"context"

	"google.golang.org/grpc"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/grpclock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

type userKey struct{}

// Where the interceptors go in a server's chains: after recovery, so that a
// handler's panic releases the lock and then reaches recovery, and after
// auth, so that FromContext finds the user.
func Example_chain() {
	locker := core.NewLocker(memorystore.New()) // redisstore.New(client) across instances
	pass := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		return next(ctx, req)
	}
	passStream := func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, next grpc.StreamHandler) error {
		return next(srv, ss)
	}
	recovery, auth, recoveryStream, authStream := pass, pass, passStream, passStream // yours

	srv := grpc.NewServer(
		grpc.ChainUnaryInterceptor(recovery, auth, grpclock.UnaryServerInterceptor(httplock.Config{
			Locker: locker,                          // one *core.Locker per store, shared
			Key:    httplock.FromContext(userKey{}), // the user your auth interceptor verified
			Mode:   httplock.Wait,                   // duplicates queue (up to MaxWait) instead of Aborted
		})),
		grpc.ChainStreamInterceptor(recoveryStream, authStream, grpclock.StreamServerInterceptor(httplock.Config{
			Locker: locker,
			Key:    httplock.FromContext(userKey{}),
		})),
	)
	srv.Stop()
}
