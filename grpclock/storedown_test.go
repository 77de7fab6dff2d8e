package grpclock_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health/grpc_health_v1"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/grpclock"
	"github.com/reqlock/reqlock/grpclock/internal/redisserver"
	"github.com/reqlock/reqlock/redisstore"
)

func TestStoreDown(t *testing.T) {
	for _, failOpen := range []bool{false, true} {
		name := map[bool]string{false: "fail-closed", true: "fail-open"}[failOpen]
		t.Run(name, func(t *testing.T) {
			srv := redisserver.Start(t)
			l := core.NewLocker(redisstore.New(srv.Client(t)), core.WithLogger(quiet))
			ran := 0
			s := serve(t, &health{check: func(context.Context, *grpc_health_v1.HealthCheckRequest) error {
				ran++
				return nil
			}}, grpclock.Config{Locker: l, Key: grpclock.FromMetadata("x-key"), FailOpen: failOpen,
				StoreTimeout: 500 * time.Millisecond, Logger: quiet})
			if err := s.check(t.Context(), "k"); err != nil {
				t.Fatalf("with Redis up: %v", err)
			}
			srv.Kill()
			err := s.check(t.Context(), "k")
			if failOpen {
				if err != nil || ran != 2 {
					t.Fatalf("fail-open with Redis down: %v, handler ran %d times; want it run unlocked", err, ran)
				}
				return
			}
			st := wantCode(t, err, codes.Unavailable)
			if retryInfo(st) == nil {
				t.Fatalf("Unavailable without RetryInfo: %v", st.Details())
			}
			if ran != 1 {
				t.Fatalf("the handler ran %d times; fail-closed must not run it with Redis down", ran)
			}
		})
	}
}
