package grpclock_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/grpclock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore"
)

// quiet drops the engine's and the Locker's logs: tests check codes.
var quiet = slog.New(slog.DiscardHandler)

// backend is one store the cases run against; redis is nil for memory.
type backend struct {
	locker *core.Locker
	redis  *redistest.Server
}

// memoryLocker is a Locker on a fresh memory store.
func memoryLocker() *core.Locker {
	return core.NewLocker(memorystore.New(), core.WithLogger(quiet))
}

// eachStore runs f against the memory store and a real Redis.
func eachStore(t *testing.T, f func(t *testing.T, be backend)) {
	t.Run("memory", func(t *testing.T) {
		f(t, backend{locker: memoryLocker()})
	})
	t.Run("redis", func(t *testing.T) {
		srv := redistest.Start(t)
		l := core.NewLocker(redisstore.New(srv.Client(t)), core.WithLogger(quiet))
		f(t, backend{locker: l, redis: srv})
	})
}

// health is the service under test: grpc's health service, whose Check
// (unary) and Watch (server stream) run what the test gives them.
type health struct {
	grpc_health_v1.UnimplementedHealthServer
	check func(ctx context.Context, req *grpc_health_v1.HealthCheckRequest) error
	watch func(stream grpc.ServerStreamingServer[grpc_health_v1.HealthCheckResponse]) error
}

func (h *health) Check(ctx context.Context, req *grpc_health_v1.HealthCheckRequest) (*grpc_health_v1.HealthCheckResponse, error) {
	if h.check != nil {
		if err := h.check(ctx, req); err != nil {
			return nil, err
		}
	}
	return &grpc_health_v1.HealthCheckResponse{Status: grpc_health_v1.HealthCheckResponse_SERVING}, nil
}

func (h *health) Watch(req *grpc_health_v1.HealthCheckRequest, stream grpc.ServerStreamingServer[grpc_health_v1.HealthCheckResponse]) error {
	if h.watch == nil {
		return stream.Send(&grpc_health_v1.HealthCheckResponse{Status: grpc_health_v1.HealthCheckResponse_SERVING})
	}
	return h.watch(stream)
}

// server is a gRPC server on a free loopback port with recovery, auth
// and the interceptors, and a client of it; both are stopped at the end of
// the test.
type server struct {
	client grpc_health_v1.HealthClient
}

func serve(t testing.TB, h *health, cfg httplock.Config) *server {
	t.Helper()
	return serveWith(t, h, cfg, nil)
}

// serveWith is serve with auth, when not nil, chained between recovery and
// the lock.
func serveWith(t testing.TB, h *health, cfg httplock.Config, auth grpc.UnaryServerInterceptor) *server {
	t.Helper()
	unary := []grpc.UnaryServerInterceptor{recoverUnary}
	if auth != nil {
		unary = append(unary, auth)
	}
	unary = append(unary, grpclock.UnaryServerInterceptor(cfg))
	return &server{client: start(t, h,
		grpc.ChainUnaryInterceptor(unary...),
		grpc.StreamInterceptor(grpclock.StreamServerInterceptor(cfg)))}
}

// start runs h on a gRPC server with opts, on a free loopback port, and
// returns a client of it; both are stopped at the end of the test.
func start(t testing.TB, h *health, opts ...grpc.ServerOption) grpc_health_v1.HealthClient {
	t.Helper()
	srv := grpc.NewServer(opts...)
	grpc_health_v1.RegisterHealthServer(srv, h)
	return grpc_health_v1.NewHealthClient(listen(t, srv))
}

// listen serves srv on a free loopback port and returns a connection to
// it; both are closed at the end of the test.
func listen(t testing.TB, srv *grpc.Server) *grpc.ClientConn {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(lis) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		srv.Stop()
		<-done
	})
	return conn
}

// recoverUnary is the recovery interceptor every gRPC server should have:
// a panic becomes Internal.
func recoverUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, status.Error(codes.Internal, "handler panicked")
		}
	}()
	return next(ctx, req)
}

// withKey is ctx with the x-key metadata the tests key calls by.
func withKey(ctx context.Context, key string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "x-key", key)
}

// wantCode fails unless err is a status with code c.
func wantCode(t *testing.T, err error, c codes.Code) *status.Status {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok || st.Code() != c {
		t.Fatalf("got %v, want code %v", err, c)
	}
	return st
}

// retryInfo is the RetryInfo among st's details, or nil.
func retryInfo(st *status.Status) *errdetails.RetryInfo {
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			return ri
		}
	}
	return nil
}

// drain reads a stream to its end and returns the error that ended it (nil
// for a clean end).
func drain[T any](s grpc.ServerStreamingClient[T]) error {
	for {
		if _, err := s.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}
