package grpclock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health/grpc_health_v1"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/grpclock"
)

func TestDuplicateIsAbortedWithRetryInfo(t *testing.T) {
	eachStore(t, func(t *testing.T, be backend) {
		g := newGate()
		s := serve(t, &health{check: func(ctx context.Context, _ *grpc_health_v1.HealthCheckRequest) error {
			if _, ok := core.FromContext(ctx); !ok {
				return errors.New("the handler's context carries no lock")
			}
			return g.pass(ctx)
		}}, grpclock.Config{Locker: be.locker, Key: grpclock.FromMetadata("x-key"), Logger: quiet})
		ctx := t.Context()
		first := make(chan error, 1)
		go func() { first <- s.check(ctx, "pay-1") }()
		g.waitEntered(t)

		st := wantCode(t, s.check(ctx, "pay-1"), codes.Aborted)
		ri := retryInfo(st)
		if ri == nil || ri.GetRetryDelay().AsDuration() <= 0 {
			t.Fatalf("Aborted without a RetryInfo delay: %v", st.Details())
		}
		g.release()
		if err := <-first; err != nil {
			t.Fatalf("the first call: %v", err)
		}
		if err := s.check(ctx, "pay-1"); err != nil { // released
			t.Fatalf("after the first call ended: %v", err)
		}
		if most, total := g.counts(); most != 1 || total != 2 {
			t.Fatalf("handler ran %d times, %d at most at once; want 2, one at a time", total, most)
		}
	})
}

func TestWaitServesInTurn(t *testing.T) {
	eachStore(t, func(t *testing.T, be backend) {
		var mu sync.Mutex
		running, most, total := 0, 0, 0
		s := serve(t, &health{check: func(context.Context, *grpc_health_v1.HealthCheckRequest) error {
			mu.Lock()
			running++
			total++
			most = max(most, running)
			mu.Unlock()
			time.Sleep(20 * time.Millisecond) // long enough for the others to queue
			mu.Lock()
			running--
			mu.Unlock()
			return nil
		}}, grpclock.Config{Locker: be.locker, Key: grpclock.FromMetadata("x-key"), Mode: grpclock.Wait,
			MaxWait: 20 * time.Second, Logger: quiet})
		const n = 8
		errs := make(chan error, n)
		for range n {
			go func() { errs <- s.check(t.Context(), "same") }()
		}
		for range n {
			if err := <-errs; err != nil {
				t.Fatalf("a waiting call: %v", err)
			}
		}
		if most != 1 || total != n {
			t.Fatalf("%d calls ran, at most %d at once; want %d, one at a time", total, most, n)
		}
	})
}

func TestClientGoneWhileWaiting(t *testing.T) {
	eachStore(t, func(t *testing.T, be backend) {
		g := newGate()
		s := serve(t, &health{check: func(ctx context.Context, _ *grpc_health_v1.HealthCheckRequest) error {
			return g.pass(ctx)
		}}, grpclock.Config{Locker: be.locker, Key: grpclock.FromMetadata("x-key"), Mode: grpclock.Wait,
			MaxWait: 20 * time.Second, Logger: quiet})
		first := make(chan error, 1)
		go func() { first <- s.check(t.Context(), "k") }()
		g.waitEntered(t)

		ctx, cancel := context.WithCancel(t.Context())
		waiter := make(chan error, 1)
		go func() { waiter <- s.check(ctx, "k") }()
		time.Sleep(100 * time.Millisecond) // the second call reaches the server and waits
		cancel()
		wantCode(t, <-waiter, codes.Canceled)
		if c := s.lastCode(t); c != codes.Canceled {
			t.Fatalf("the server answered the call whose client left with %v, want Canceled", c)
		}
		g.release()
		if err := <-first; err != nil {
			t.Fatalf("the first call: %v", err)
		}
		if _, total := g.counts(); total != 1 {
			t.Fatalf("the handler ran %d times; the call whose client left must not run", total)
		}
		if err := s.check(t.Context(), "k"); err != nil {
			t.Fatalf("after both: %v", err)
		}
	})
}

func TestHandlerPanicReleasesTheLock(t *testing.T) {
	eachStore(t, func(t *testing.T, be backend) {
		panics := true
		s := serve(t, &health{check: func(context.Context, *grpc_health_v1.HealthCheckRequest) error {
			if panics {
				panic("handler bug")
			}
			return nil
		}}, grpclock.Config{Locker: be.locker, Key: grpclock.FromMetadata("x-key"), Logger: quiet})
		wantCode(t, s.check(t.Context(), "k"), codes.Internal)
		panics = false
		if err := s.check(t.Context(), "k"); err != nil { // Aborted if the panic had kept the lock
			t.Fatalf("after a panic: %v", err)
		}
	})
}

func TestStreamHoldsTheLockForItsLife(t *testing.T) {
	eachStore(t, func(t *testing.T, be backend) {
		g := newGate()
		s := serve(t, &health{watch: func(stream grpc.ServerStreamingServer[grpc_health_v1.HealthCheckResponse]) error {
			if _, ok := core.FromContext(stream.Context()); !ok {
				return errors.New("the stream's context carries no lock")
			}
			if err := stream.Send(&grpc_health_v1.HealthCheckResponse{}); err != nil {
				return err
			}
			return g.pass(stream.Context())
		}}, grpclock.Config{Locker: be.locker, Key: grpclock.FromMetadata("x-key"), Logger: quiet})
		ctx := t.Context()
		watch := func() (grpc.ServerStreamingClient[grpc_health_v1.HealthCheckResponse], error) {
			return s.client.Watch(withKey(ctx, "sub-1"), &grpc_health_v1.HealthCheckRequest{})
		}
		first, err := watch()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := first.Recv(); err != nil { // the stream is open and has sent
			t.Fatalf("first stream: %v", err)
		}
		g.waitEntered(t)
		second, err := watch()
		if err != nil {
			t.Fatal(err)
		}
		wantCode(t, drain(second), codes.Aborted)

		g.release()
		if err := drain(first); err != nil {
			t.Fatalf("first stream's end: %v", err)
		}
		third, err := watch()
		if err != nil {
			t.Fatal(err)
		}
		if err := drain(third); err != nil {
			t.Fatalf("a stream after the first ended: %v", err)
		}
	})
}
