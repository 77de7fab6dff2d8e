package connectlock

import (
	"context"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/rpcreplay"
	"github.com/reqlock/reqlock/internal/rpcstatus"
)

// HeaderReplayed marks a replayed response: "Idempotent-Replayed: true", as
// the HTTP middleware sends it.
const HeaderReplayed = httplock.HeaderIdempotentReplayed

// replaying is WrapUnary with Config.Replay: the engine's ServeRecorded
// keeps the response's record and decides, by the request's fingerprint,
// whether a call runs, gets the record or is refused.
func (i *Interceptor) replaying(next connect.UnaryFunc) connect.UnaryFunc {
	logger := i.unary.Config().Logger
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if req.Spec().IsClient {
			return next(ctx, req)
		}
		procedure := req.Spec().Procedure
		key, kerr := i.unary.CallKey(ctx, header(req.Header()), req.Any())
		scope := i.unary.CallScope(procedure)
		// A request that is no protobuf message has no fingerprint: the
		// engine answers CodeInternal and logs it.
		fp, _ := rpcreplay.Fingerprint(procedure, req.Any())
		var resp connect.AnyResponse
		var err error
		rec, replayed, rej := i.unary.ServeRecorded(ctx, scope, key, kerr, fp, func(ctx context.Context) ([]byte, error) {
			if resp, err = next(ctx, req); err != nil {
				return nil, err // an error is not recorded
			}
			return rpcreplay.Encode(resp.Any())
		})
		switch {
		case rej != nil:
			return nil, Error(rej)
		case !replayed:
			return resp, err
		}
		m, derr := rpcreplay.Decode(rec)
		if derr != nil {
			logger.ErrorContext(ctx, "reqlock: a key's recorded response cannot be read; answering CodeInternal", "error", derr, "reqlock.scope", scope)
			return nil, connect.NewError(connect.CodeInternal, errRecordUnreadable)
		}
		res := connect.NewResponse(&replayedMessage{m})
		res.Header().Set(HeaderReplayed, "true")
		return res, nil
	}
}

// replayedMessage is a recorded response message on its way out: a
// connect.Response needs a pointer type, which a message rebuilt by its
// name does not give statically; the codecs see the recorded message
// through ProtoReflect.
type replayedMessage struct{ proto.Message }

// errRecordUnreadable is the message of CodeInternal for a record this
// server cannot rebuild.
var errRecordUnreadable = recordUnreadable{}

type recordUnreadable struct{}

func (recordUnreadable) Error() string { return rpcstatus.RecordUnreadable }
