package connectlock

import (
	"context"
	"fmt"

	"connectrpc.com/connect"

	"github.com/reqlock/reqlock/httplock"
)

// Interceptor runs at most one call per key at a time across a service's
// instances, on the handler side: unary calls (replayed with
// Config.Replay) and streams of every kind, whose lock is held until the
// handler returns. On a client it does nothing.
type Interceptor struct {
	unary  *httplock.Engine // with Config.Replay
	stream *httplock.Engine // never replays
}

var _ connect.Interceptor = (*Interceptor)(nil)

// NewInterceptor checks cfg and builds the interceptor. The error is an
// *httplock.ConfigError naming the field, which wraps
// httplock.ErrInvalidConfig (nil Locker or Key, negative durations, Replay
// on a store that keeps no records, a setting only HTTP has).
//
// Give it to handlers after your recovery (connect.WithRecover) and auth
// interceptors: recovery must be outside it to receive a handler's panic
// (the lock is released first), and auth must have run for
// httplock.FromContext to find the user:
//
//	connect.WithRecover(onPanic), connect.WithInterceptors(auth, lock)
func NewInterceptor(cfg httplock.Config) (*Interceptor, error) {
	unary, err := httplock.NewCallEngine(cfg)
	if err != nil {
		return nil, fmt.Errorf("connectlock: %w", err)
	}
	cfg.Replay = nil
	stream, err := httplock.NewCallEngine(cfg)
	if err != nil {
		return nil, fmt.Errorf("connectlock: %w", err)
	}
	return &Interceptor{unary: unary, stream: stream}, nil
}

// WrapUnary locks a unary call by its key, and with Config.Replay answers a
// retry with the recorded response.
func (i *Interceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	if i.unary.Config().Replay != nil {
		return i.replaying(next)
	}
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if req.Spec().IsClient {
			return next(ctx, req)
		}
		key, kerr := i.unary.CallKey(ctx, header(req.Header()), req.Any())
		var resp connect.AnyResponse
		var err error
		rej := i.unary.Serve(ctx, i.unary.CallScope(req.Spec().Procedure), key, kerr, func(ctx context.Context) {
			resp, err = next(ctx, req)
		})
		if rej != nil {
			return nil, Error(rej)
		}
		return resp, err
	}
}

// WrapStreamingClient does nothing: the lock is the server's.
func (i *Interceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

// WrapStreamingHandler locks a stream by its key for the handler's whole
// life. The key comes from the header or the context: the stream's
// messages arrive after the lock is taken (httplock.FromMessage is
// httplock.ErrNoMessage).
func (i *Interceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		key, kerr := i.stream.CallKey(ctx, header(conn.RequestHeader()), nil)
		var err error
		rej := i.stream.Serve(ctx, i.stream.CallScope(conn.Spec().Procedure), key, kerr, func(ctx context.Context) {
			err = next(ctx, conn)
		})
		if rej != nil {
			return Error(rej)
		}
		return err
	}
}
