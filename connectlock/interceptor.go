package connectlock

import (
	"context"

	"connectrpc.com/connect"

	"github.com/reqlock/reqlock/httplock"
)

// Interceptor runs at most one call per key at a time across a service's
// instances, on the handler side: unary calls (replayed with
// Config.Replay) and streams of every kind, whose lock is held until the
// handler returns. On a client it does nothing.
type Interceptor struct {
	cfg    Config
	unary  *httplock.Engine // with Config.Replay
	stream *httplock.Engine // never replays
}

var _ connect.Interceptor = (*Interceptor)(nil)

// NewInterceptor checks cfg and builds the interceptor. The error wraps
// httplock.ErrInvalidConfig (nil Locker or Key, negative durations, Replay
// on a store that keeps no records).
//
// Give it to handlers after your recovery (connect.WithRecover) and auth
// interceptors: recovery must be outside it to receive a handler's panic
// (the lock is released first), and auth must have run for FromContext to
// find the user:
//
//	connect.WithRecover(onPanic), connect.WithInterceptors(auth, lock)
func NewInterceptor(cfg Config) (*Interceptor, error) {
	unary, err := cfg.engine(true)
	if err != nil {
		return nil, err
	}
	stream, err := cfg.engine(false)
	if err != nil {
		return nil, err
	}
	return &Interceptor{cfg: cfg, unary: unary, stream: stream}, nil
}

// WrapUnary locks a unary call by its key, and with Config.Replay answers a
// retry with the recorded response.
func (i *Interceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	if i.cfg.Replay != nil {
		return i.replaying(next)
	}
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if req.Spec().IsClient {
			return next(ctx, req)
		}
		key, kerr := i.cfg.Key(ctx, req.Header(), req.Any())
		var resp connect.AnyResponse
		var err error
		rej := i.unary.Serve(ctx, i.cfg.scope(req.Spec().Procedure), key, kerr, func(ctx context.Context) {
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
// messages arrive after the lock is taken (FromRequest is ErrNoRequest).
func (i *Interceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		key, kerr := i.cfg.Key(ctx, conn.RequestHeader(), nil)
		var err error
		rej := i.stream.Serve(ctx, i.cfg.scope(conn.Spec().Procedure), key, kerr, func(ctx context.Context) {
			err = next(ctx, conn)
		})
		if rej != nil {
			return Error(rej)
		}
		return err
	}
}
