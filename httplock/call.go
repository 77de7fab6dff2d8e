package httplock

import (
	"context"
	"fmt"
	"net/http"
)

// ErrNoMessage is what FromMessage returns on a stream, which has no request
// message when the lock is taken. It wraps ErrKeyMisconfigured (answered
// Internal and logged): key a stream by its metadata or context instead.
var ErrNoMessage = fmt.Errorf("%w: a stream has no request message to key by", ErrKeyMisconfigured)

// call is an RPC as the key functions see it: its request message, nil on
// a stream.
type call struct{ msg any }

// calls carries a call on the request CallKey hands to Config.Key.
var calls = NewFrameworkContext[call]("rpc")

// FromMessage uses a field of a unary RPC's request message, which f picks
// out (an order ID, a request ID the client chose), under grpclock and
// connectlock. An error f returns is the client's (InvalidArgument) unless
// it wraps ErrKeyMisconfigured. On a stream it is ErrNoMessage.
func FromMessage(f func(ctx context.Context, msg any) (string, error)) KeyFunc {
	return func(r *http.Request) (string, error) {
		c, ok := calls.From(r)
		switch {
		case !ok:
			return "", errMessageOutsideCall
		case c.msg == nil:
			return "", ErrNoMessage
		}
		return f(r.Context(), c.msg)
	}
}

// errMessageOutsideCall is FromMessage given to an HTTP middleware, where
// there is no request message.
var errMessageOutsideCall = fmt.Errorf("%w: httplock.FromMessage used outside an RPC adapter (grpclock, connectlock)", ErrKeyMisconfigured)

// errQueryOnCall is FromQuery under an RPC adapter: a call has no query
// string, and the call would run without its key.
var errQueryOnCall = fmt.Errorf("%w: httplock.FromQuery used on an RPC, which has no query string", ErrKeyMisconfigured)

// CallScope is the lock scope of an RPC: Config.Scope when set, otherwise
// the full method name ("/pkg.Service/Method"), so that each method locks
// on its own.
func (e *Engine) CallScope(method string) string {
	if e.cfg.Scope != "" {
		return e.cfg.Scope
	}
	return method
}

// CallKey is Config.Key of an RPC that an adapter (grpclock, connectlock)
// serves: it runs on a request that carries ctx, the call's metadata as
// md reads it (FromHeader, IdempotencyKey) and msg, the request message of
// a unary call or nil on a stream (FromMessage). FromContext reads ctx.
func (e *Engine) CallKey(ctx context.Context, md RequestView, msg any) (string, error) {
	return e.cfg.Key(calls.View(ctx, http.MethodPost, call{msg}, md))
}

// NewCallEngine is NewKeyedEngine for an RPC adapter. It refuses, naming
// the field, the settings that only an HTTP response has, so that none is
// set and silently ignored: Respond and WaitBodyLimit, and Replay's
// RecordStatus, Headers, MaxRequestBody and Fingerprint (an RPC's
// fingerprint is its method and request message).
func NewCallEngine(cfg Config) (*Engine, error) {
	switch {
	case cfg.Respond != nil:
		return nil, badField("Respond", "is set, and an RPC's answers are status codes (see the adapter's table)", nil)
	case cfg.WaitBodyLimit != 0:
		return nil, badField("WaitBodyLimit", "is set, and an RPC has no request body to read ahead", nil)
	}
	if r := cfg.Replay; r != nil {
		switch {
		case r.RecordStatus != nil:
			return nil, badField("Replay.RecordStatus", "is set, and an RPC records only a response without error", nil)
		case r.Headers != nil:
			return nil, badField("Replay.Headers", "is set, and an RPC's recorded response is its message", nil)
		case r.MaxRequestBody != 0:
			return nil, badField("Replay.MaxRequestBody", "is set, and an RPC's fingerprint is its whole request message", nil)
		case r.Fingerprint != nil:
			return nil, badField("Replay.Fingerprint", "is set, and an RPC's fingerprint is its method and request message", nil)
		}
	}
	return NewKeyedEngine(cfg)
}
