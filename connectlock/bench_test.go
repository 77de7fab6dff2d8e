package connectlock_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/reqlock/reqlock/connectlock"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/rpccases"
)

// BenchmarkUnary times a unary call with the interceptor and without it, and
// a core cycle (TryObtain + Release) on the same store, interleaved
// in one loop so that a machine's drift falls on all three alike.
// overhead/cycle is what the interceptor adds to a call, in core cycles:
// the bar is 1.25. "direct" calls the wrapped UnaryFunc as Connect does, so
// the figure is the interceptor's alone; "loopback" makes real calls to a
// server on 127.0.0.1 over HTTP/1.1, whose own cost and noise are a
// hundred cycles and more. On the memory store a cycle is a couple of
// microseconds, so the engine's own work (the lock's context, the key's
// scope) weighs more there than on Redis, where the bar is judged.
func BenchmarkUnary(b *testing.B) {
	for _, st := range rpccases.Stores {
		b.Run(st.Name, func(b *testing.B) { benchUnary(b, st.Open(b).Locker) })
	}
}

func benchUnary(b *testing.B, l *core.Locker) {
	ctx := context.Background()
	lockKey := httplock.LockKey(rpccases.UnaryMethod, "alice")
	cycle := func() {
		lk, err := l.TryObtain(ctx, lockKey)
		if err != nil {
			b.Fatal(err)
		}
		if err := lk.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
	newLock := func(cfg httplock.Config) *connectlock.Interceptor {
		lock, err := connectlock.NewInterceptor(cfg)
		if err != nil {
			b.Fatal(err)
		}
		return lock
	}
	b.Run("direct", func(b *testing.B) {
		// A request made outside a handler has no procedure: the scope is
		// given, as the one a handler's call would have.
		lock := newLock(httplock.Config{Locker: l, Key: httplock.FromHeader(rpccases.KeyHeaderName),
			Scope: rpccases.UnaryMethod, Logger: rpccases.Quiet})
		bare := connect.UnaryFunc(func(_ context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			return connect.NewResponse(wrapperspb.String(req.Any().(*wrapperspb.StringValue).GetValue())), nil
		})
		locked := lock.WrapUnary(bare)
		req := connect.NewRequest(wrapperspb.String("a"))
		req.Header().Set(rpccases.KeyHeaderName, "alice")
		call := func(f connect.UnaryFunc) func() {
			return func() {
				if _, err := f(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		}
		interleave(b, cycle, call(bare), call(locked))
	})
	b.Run("loopback", func(b *testing.B) {
		lock := newLock(httplock.Config{Locker: l, Key: httplock.FromHeader(rpccases.KeyHeaderName), Logger: rpccases.Quiet})
		client := func(opts ...connect.HandlerOption) func() {
			srv := httptest.NewServer(echoHandlers(rpccases.Handlers{}, opts...))
			b.Cleanup(srv.Close)
			c := connect.NewClient[wrapperspb.StringValue, wrapperspb.StringValue](srv.Client(), srv.URL+rpccases.UnaryMethod)
			req := connect.NewRequest(wrapperspb.String("a"))
			req.Header().Set(rpccases.KeyHeaderName, "alice")
			return func() {
				if _, err := c.CallUnary(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		}
		bare, locked := client(), client(connect.WithInterceptors(lock))
		bare() // connect both before timing
		locked()
		interleave(b, cycle, bare, locked)
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
