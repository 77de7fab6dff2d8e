package grpclock

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/rpcreplay"
	"github.com/reqlock/reqlock/internal/rpcstatus"
)

// HeaderReplayed is the header metadata of a replayed response:
// "idempotent-replayed: true".
const HeaderReplayed = rpcreplay.Header

// replaying is the unary interceptor with Config.Replay: the engine's
// ServeRecorded keeps the response's record and decides, by the request's
// fingerprint, whether a call runs, gets the record or is refused.
func replaying(e *httplock.Engine) grpc.UnaryServerInterceptor {
	logger := e.Config().Logger
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		key, kerr := e.CallKey(ctx, &incoming{ctx}, req)
		scope := e.CallScope(info.FullMethod)
		// A request that is no protobuf message has no fingerprint: the
		// engine answers Internal and logs it.
		fp, _ := rpcreplay.Fingerprint(info.FullMethod, req)
		var resp any
		var err error
		rec, replayed, rej := e.ServeRecorded(ctx, scope, key, kerr, fp, func(ctx context.Context) ([]byte, error) {
			if resp, err = handler(ctx, req); err != nil {
				return nil, err // an error is not recorded
			}
			return rpcreplay.Encode(resp)
		})
		switch {
		case rej != nil:
			return nil, Status(rej).Err()
		case !replayed:
			return resp, err
		}
		m, derr := rpcreplay.Decode(rec)
		if derr != nil {
			logger.ErrorContext(ctx, "reqlock: a key's recorded response cannot be read; answering Internal", "error", derr, "reqlock.scope", scope)
			return nil, status.Error(codes.Internal, rpcstatus.RecordUnreadable)
		}
		_ = grpc.SetHeader(ctx, metadata.Pairs(HeaderReplayed, "true"))
		return m, nil
	}
}
