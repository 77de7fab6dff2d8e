package connectlock

import (
	"context"
	"fmt"
	"net/http"
	"reflect"

	"github.com/reqlock/reqlock/httplock"
)

// KeyFunc extracts the raw lock key of a call from its request header and,
// for a unary call, its request message (msg is nil on a stream, whose
// messages the handler reads later). "" means no key; an error is answered
// with CodeInvalidArgument, or CodeInternal when it wraps
// httplock.ErrKeyMisconfigured.
type KeyFunc func(ctx context.Context, header http.Header, msg any) (string, error)

// ErrNoRequest is what FromRequest returns on a stream, which has no request
// message when the lock is taken. It wraps httplock.ErrKeyMisconfigured
// (CodeInternal, logged): key a stream by header or context instead.
var ErrNoRequest = fmt.Errorf("%w: a stream has no request message to key by", httplock.ErrKeyMisconfigured)

// FromHeader uses the request header name (as Connect, gRPC and gRPC-Web
// send metadata). A client sets it, so it is for idempotency keys, never to
// say who the user is. No such header means no key; more than one line of
// it (httplock.ErrMultipleValues) or an empty one (httplock.ErrEmptyValue)
// is CodeInvalidArgument.
func FromHeader(name string) KeyFunc {
	name = http.CanonicalHeaderKey(name)
	return func(_ context.Context, h http.Header, _ any) (string, error) {
		vs := h[name]
		switch {
		case len(vs) == 0:
			return "", nil
		case len(vs) > 1:
			return "", httplock.ErrMultipleValues
		case vs[0] == "":
			return "", httplock.ErrEmptyValue
		}
		return vs[0], nil
	}
}

// FromContext uses a value an earlier interceptor put on the call's
// context, typically the user ID your auth interceptor verified: the way to
// allow one call per user. The value goes through httplock.KeyOf (a type it
// cannot use is CodeInternal). No value is httplock.ErrNoContextValue: no
// key, warned about once, or CodeInternal (logged) with KeyRequired. It
// panics if key is nil or not comparable: no context can hold a value
// under it.
func FromContext(key any) KeyFunc {
	if key == nil || !reflect.TypeOf(key).Comparable() {
		panic(fmt.Errorf("connectlock.FromContext: %w: key %T can never be on a context", httplock.ErrInvalidConfig, key))
	}
	return func(ctx context.Context, _ http.Header, _ any) (string, error) {
		v := ctx.Value(key)
		if v == nil {
			return "", httplock.ErrNoContextValue
		}
		return httplock.KeyOf(v)
	}
}

// FromRequest uses a field of a unary call's request message (req is the
// message, as connect.AnyRequest.Any returns it), which f picks out: an
// order ID, a client-chosen request ID. An error f returns is the
// client's (CodeInvalidArgument) unless it wraps
// httplock.ErrKeyMisconfigured. On a stream it is ErrNoRequest.
func FromRequest(f func(ctx context.Context, req any) (string, error)) KeyFunc {
	return func(ctx context.Context, _ http.Header, msg any) (string, error) {
		if msg == nil {
			return "", ErrNoRequest
		}
		return f(ctx, msg)
	}
}

// Join combines the keys of fns into one, such as user + order: one call
// per user per order. If any of them finds no key, there is no key. The key
// is httplock.JoinKeys of the parts, as for the other adapters' Join.
func Join(fns ...KeyFunc) KeyFunc {
	return func(ctx context.Context, h http.Header, msg any) (string, error) {
		parts := make([]string, 0, len(fns))
		for _, f := range fns {
			k, err := f(ctx, h, msg)
			if err != nil || k == "" {
				return "", err
			}
			parts = append(parts, k)
		}
		return httplock.JoinKeys(parts...), nil
	}
}
