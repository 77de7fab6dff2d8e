package grpclock

import (
	"context"

	"google.golang.org/grpc"
)

// UnaryServerInterceptor runs at most one unary call per key at a time, and
// with Config.Replay answers a retry with the recorded response. It panics
// if cfg is invalid (nil Locker or Key, negative durations, Replay on a
// store that keeps no records), a mistake to catch at start-up.
//
// Chain it after your recovery and auth interceptors: recovery must be
// outside it to receive a handler's panic (the lock is released first), and
// auth must have run for FromContext to find the user.
func UnaryServerInterceptor(cfg Config) grpc.UnaryServerInterceptor {
	e := cfg.engine("grpclock.UnaryServerInterceptor")
	if cfg.Replay != nil {
		return replaying(cfg, e)
	}
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		key, kerr := cfg.Key(ctx, req)
		var resp any
		var err error
		rej := e.Serve(ctx, cfg.scope(info.FullMethod), key, kerr, func(ctx context.Context) {
			resp, err = handler(ctx, req)
		})
		if rej != nil {
			return nil, Status(rej).Err()
		}
		return resp, err
	}
}

// StreamServerInterceptor runs at most one stream per key at a time, and
// holds the lock for the stream's whole life. Its key comes from metadata
// or the context: a stream has no request message yet (FromRequest is
// ErrNoRequest). Streams are never replayed: Config.Replay is for unary
// calls. It panics if cfg is invalid. Chain it as the unary one.
//
// With grpc.UnknownServiceHandler, stream interceptors also run for methods
// the server does not know, whose names the client picks: give such a
// server a Scope, or the default scope is theirs, in the lock's key and in
// the metrics alike.
func StreamServerInterceptor(cfg Config) grpc.StreamServerInterceptor {
	cfg.Replay = nil
	e := cfg.engine("grpclock.StreamServerInterceptor")
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		ctx := ss.Context()
		key, kerr := cfg.Key(ctx, nil)
		var err error
		rej := e.Serve(ctx, cfg.scope(info.FullMethod), key, kerr, func(lctx context.Context) {
			if lctx != ctx { // locked: the handler sees the lock's context
				ss = lockedStream{ss, lctx}
			}
			err = handler(srv, ss)
		})
		if rej != nil {
			return Status(rej).Err()
		}
		return err
	}
}

// lockedStream is a stream whose context carries the lock
// (core.FromContext) and ends with cause core.ErrLockLost if it is lost.
type lockedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s lockedStream) Context() context.Context { return s.ctx }
