package grpclock_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/grpclock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/rpccases"
)

// BenchmarkUnary times a unary call with the interceptor and without it, and
// a core cycle (TryObtain + Release) on the same store, interleaved
// in one loop so that a machine's drift falls on all three alike.
// overhead/cycle is what the interceptor adds to a call, in core cycles:
// the bar is 1.25. "direct" calls the interceptor as grpc-go does, on a
// context with incoming metadata, so the figure is the interceptor's alone;
// "loopback" makes real calls to a server on 127.0.0.1, whose own cost and
// noise are a hundred cycles and more.
//
// It runs on the memory store and on Redis: a memory cycle is a couple of
// microseconds, so the engine's own work weighs more there than on Redis,
// where the bar is judged.
func BenchmarkUnary(b *testing.B) {
	for _, st := range rpccases.Stores {
		b.Run(st.Name, func(b *testing.B) { benchUnary(b, st.Open(b).Locker) })
	}
}

func benchUnary(b *testing.B, l *core.Locker) {
	icpt := grpclock.UnaryServerInterceptor(httplock.Config{Locker: l, Key: httplock.FromHeader("x-key"), Logger: quiet})
	ctx := context.Background()
	cycle := func() {
		lk, err := l.TryObtain(ctx, "/grpc.health.v1.Health/Check alice")
		if err != nil {
			b.Fatal(err)
		}
		if err := lk.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("direct", func(b *testing.B) {
		h := &health{}
		info := &grpc.UnaryServerInfo{Server: h, FullMethod: "/grpc.health.v1.Health/Check"}
		in := metadata.NewIncomingContext(ctx, metadata.Pairs("x-key", "alice"))
		req := &grpc_health_v1.HealthCheckRequest{}
		handler := func(ctx context.Context, req any) (any, error) {
			return h.Check(ctx, req.(*grpc_health_v1.HealthCheckRequest))
		}
		interleave(b, cycle,
			func() {
				if _, err := handler(in, req); err != nil {
					b.Fatal(err)
				}
			},
			func() {
				if _, err := icpt(in, req, info, handler); err != nil {
					b.Fatal(err)
				}
			})
	})
	b.Run("loopback", func(b *testing.B) {
		bare := start(b, &health{})
		locked := start(b, &health{}, grpc.UnaryInterceptor(icpt))
		out := withKey(ctx, "alice")
		call := func(c grpc_health_v1.HealthClient) func() {
			return func() {
				if _, err := c.Check(out, &grpc_health_v1.HealthCheckRequest{}); err != nil {
					b.Fatal(err)
				}
			}
		}
		call(bare)() // connect both before timing
		call(locked)()
		interleave(b, cycle, call(bare), call(locked))
	})
}

// interleave runs cycle, bare and locked once per iteration and reports
// each one's mean and locked's overhead over bare in cycles.
func interleave(b *testing.B, cycle, bare, locked func()) {
	b.ReportAllocs()
	var spent [3]time.Duration
	for b.Loop() {
		for i, run := range []func(){cycle, bare, locked} {
			t := time.Now()
			run()
			spent[i] += time.Since(t)
		}
	}
	ns := func(i int) float64 { return float64(spent[i]) / float64(b.N) }
	b.ReportMetric(ns(0), "cycle-ns")
	b.ReportMetric(ns(1), "bare-ns")
	b.ReportMetric(ns(2), "locked-ns")
	b.ReportMetric((ns(2)-ns(1))/ns(0), "overhead/cycle")
}
