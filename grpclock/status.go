package grpclock

import (
	"errors"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/reqlock/reqlock/httplock"
)

// Status is the gRPC answer to a call that did not reach its handler, by the
// table in the package doc. Its message is the rejection's detail, written
// to be safe to show a client; a retryable answer carries RetryInfo with
// the delay the engine suggests.
func Status(rej *httplock.Rejection) *status.Status {
	st := status.New(codeOf(rej), rej.Problem.Detail)
	if rej.RetryAfter <= 0 {
		return st
	}
	withInfo, err := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(rej.RetryAfter)})
	if err != nil { // cannot happen for a RetryInfo; the code alone still says it
		return st
	}
	return withInfo
}

// codeOf maps a rejection's reason to its code.
func codeOf(rej *httplock.Rejection) codes.Code {
	switch {
	case errors.Is(rej, httplock.ErrLocked):
		return codes.Aborted
	case errors.Is(rej, httplock.ErrTooManyWaiters):
		return codes.ResourceExhausted
	case errors.Is(rej, httplock.ErrUnavailable):
		return codes.Unavailable
	case errors.Is(rej, httplock.ErrKeyInvalid),
		errors.Is(rej, httplock.ErrKeyMissing),
		errors.Is(rej, httplock.ErrKeyTooLong):
		return codes.InvalidArgument
	case errors.Is(rej, httplock.ErrClientGone):
		return codes.Canceled
	case errors.Is(rej, httplock.ErrReplayMismatch):
		return codes.FailedPrecondition
	}
	// ErrKeyMisconfigured, ErrInvalidConfig, ErrRecordUnreadable: the
	// server's fault, logged by the engine.
	return codes.Internal
}
