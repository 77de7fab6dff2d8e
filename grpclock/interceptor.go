package grpclock

import (
	"context"
	"fmt"

	"google.golang.org/grpc"

	"github.com/reqlock/reqlock/httplock"
)

// UnaryServerInterceptor runs at most one unary call per key at a time, and
// with Config.Replay answers a retry with the recorded response. It panics
// if cfg is invalid (nil Locker or Key, negative durations, Replay on a
// store that keeps no records, a setting only HTTP has), a mistake to catch
// at start-up; the message names the field (httplock.ConfigError).
//
// Chain it after your recovery and auth interceptors: recovery must be
// outside it to receive a handler's panic (the lock is released first), and
// auth must have run for httplock.FromContext to find the user.
func UnaryServerInterceptor(cfg httplock.Config) grpc.UnaryServerInterceptor {
	e := engine("grpclock.UnaryServerInterceptor", cfg)
	if cfg.Replay != nil {
		return replaying(e)
	}
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		key, kerr := e.CallKey(ctx, &incoming{ctx}, req)
		var resp any
		var err error
		rej := e.Serve(ctx, e.CallScope(info.FullMethod), key, kerr, func(ctx context.Context) {
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
// or the context: a stream has no request message yet
// (httplock.FromMessage is httplock.ErrNoMessage). Streams are never
// replayed: Config.Replay is for unary calls, and left out here, so that
// one Config serves both interceptors. It panics if cfg is invalid. Chain
// it as the unary one.
//
// With grpc.UnknownServiceHandler, stream interceptors also run for methods
// the server does not know, whose names the client picks: give such a
// server a Scope, or the default scope is theirs, in the lock's key and in
// the metrics alike.
func StreamServerInterceptor(cfg httplock.Config) grpc.StreamServerInterceptor {
	cfg.Replay = nil
	e := engine("grpclock.StreamServerInterceptor", cfg)
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		ctx := ss.Context()
		key, kerr := e.CallKey(ctx, &incoming{ctx}, nil)
		var err error
		rej := e.Serve(ctx, e.CallScope(info.FullMethod), key, kerr, func(lctx context.Context) {
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

// engine builds the one flow every reqlock middleware runs, or panics.
func engine(caller string, cfg httplock.Config) *httplock.Engine {
	e, err := httplock.NewCallEngine(cfg)
	if err != nil {
		panic(fmt.Errorf("%s: %w", caller, err))
	}
	return e
}

// lockedStream is a stream whose context carries the lock
// (core.FromContext) and ends with cause core.ErrLockLost if it is lost.
type lockedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s lockedStream) Context() context.Context { return s.ctx }
