package grpclock_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/rpccases"
)

// withUser is an auth interceptor that puts the x-user metadata on the
// context as the verified user; a user "!" gets a value no key can be made
// of.
func withUser(ctx context.Context) context.Context {
	md, _ := metadata.FromIncomingContext(ctx)
	switch u := md.Get("x-user"); {
	case len(u) == 0:
		return ctx
	case u[0] == "!":
		return context.WithValue(ctx, userKey{}, struct{}{})
	default:
		return context.WithValue(ctx, userKey{}, u[0])
	}
}

func TestKeyAnswers(t *testing.T) {
	eachStore(t, func(t *testing.T, be backend) {
		orderID := httplock.FromMessage(func(_ context.Context, req any) (string, error) {
			r := req.(*grpc_health_v1.HealthCheckRequest)
			if strings.HasPrefix(r.Service, "bad") {
				return "", errors.New("not an order ID")
			}
			return r.Service, nil
		})
		user := httplock.FromContext(userKey{})
		cases := []struct {
			name     string
			key      httplock.KeyFunc
			required bool
			md       []string
			service  string
			want     codes.Code
		}{
			{"metadata", httplock.FromHeader("x-key"), true, []string{"x-key", "k"}, "", codes.OK},
			{"metadata twice", httplock.FromHeader("x-key"), false, []string{"x-key", "a", "x-key", "b"}, "", codes.InvalidArgument},
			{"metadata empty", httplock.FromHeader("x-key"), false, []string{"x-key", ""}, "", codes.InvalidArgument},
			{"metadata missing, not required", httplock.FromHeader("x-key"), false, nil, "", codes.OK},
			{"metadata missing, required", httplock.FromHeader("x-key"), true, nil, "", codes.InvalidArgument},
			{"metadata too long", httplock.FromHeader("x-key"), true, []string{"x-key", strings.Repeat("k", httplock.MaxKeyLen+1)}, "", codes.InvalidArgument},
			{"metadata binary", httplock.FromHeader("x-key-bin"), true, []string{"x-key-bin", allBytes()}, "", codes.OK},
			{"request", orderID, true, nil, "order-7", codes.OK},
			{"request refused", orderID, true, nil, "bad-7", codes.InvalidArgument},
			{"context", user, true, []string{"x-user", "alice"}, "", codes.OK},
			{"context missing, not required", user, false, nil, "", codes.OK},
			{"context missing, required", user, true, nil, "", codes.Internal},
			{"context of an unusable type", user, true, []string{"x-user", "!"}, "", codes.Internal},
			{"joined", httplock.Join(user, orderID), true, []string{"x-user", "alice"}, "order-7", codes.OK},
			{"joined, a part missing", httplock.Join(user, orderID), true, []string{"x-user", "alice"}, "", codes.InvalidArgument},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				ran := false
				s := serveAuth(t, &health{check: func(context.Context, *grpc_health_v1.HealthCheckRequest) error {
					ran = true
					return nil
				}}, httplock.Config{Locker: be.locker, Key: c.key, KeyRequired: c.required, Logger: quiet})
				ctx := metadata.AppendToOutgoingContext(t.Context(), c.md...)
				_, err := s.client.Check(ctx, &grpc_health_v1.HealthCheckRequest{Service: c.service})
				if c.want == codes.OK {
					if err != nil || !ran {
						t.Fatalf("got %v (handler ran: %v), want it to run", err, ran)
					}
					return
				}
				wantCode(t, err, c.want)
				if ran {
					t.Fatal("the handler ran for a refused call")
				}
			})
		}
	})
}

// A binary key is hashed, never used as is: two calls with it still
// exclude each other.
func TestBinaryKeyLocks(t *testing.T) {
	eachStore(t, func(t *testing.T, be backend) {
		g := rpccases.NewGate()
		s := serve(t, &health{check: func(ctx context.Context, _ *grpc_health_v1.HealthCheckRequest) error {
			return g.Pass(ctx)
		}}, httplock.Config{Locker: be.locker, Key: httplock.FromHeader("x-key-bin"), KeyRequired: true, Logger: quiet})
		call := func() error {
			ctx := metadata.AppendToOutgoingContext(t.Context(), "x-key-bin", allBytes())
			_, err := s.client.Check(ctx, &grpc_health_v1.HealthCheckRequest{})
			return err
		}
		first := make(chan error, 1)
		go func() { first <- call() }()
		g.WaitEntered(t)
		wantCode(t, call(), codes.Aborted)
		g.Release()
		if err := <-first; err != nil {
			t.Fatal(err)
		}
	})
}

func TestFromRequestOnAStreamIsMisconfigured(t *testing.T) {
	s := serve(t, &health{}, httplock.Config{Locker: memoryLocker(),
		Key: httplock.FromMessage(func(context.Context, any) (string, error) { return "k", nil }), Logger: quiet})
	stream, err := s.client.Watch(t.Context(), &grpc_health_v1.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, drain(stream), codes.Internal)
}

// serveAuth is serve with an auth interceptor ahead of the lock.
func serveAuth(t *testing.T, h *health, cfg httplock.Config) *server {
	return serveWith(t, h, cfg, func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		return next(withUser(ctx), req)
	})
}

// allBytes is every byte value once: a key no text header could carry.
func allBytes() string {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return string(b)
}
