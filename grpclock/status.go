package grpclock

import (
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/rpcstatus"
)

// Status is the gRPC answer to a call that did not reach its handler, by the
// table in the package doc. Its message is written to be safe to show a
// client; a retryable answer carries RetryInfo with the delay the engine
// suggests.
func Status(rej *httplock.Rejection) *status.Status {
	st := status.New(codes.Code(rpcstatus.Code(rej)), rpcstatus.Message(rej))
	if rej.RetryAfter <= 0 {
		return st
	}
	withInfo, err := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(rej.RetryAfter)})
	if err != nil { // cannot happen for a RetryInfo; the code alone still says it
		return st
	}
	return withInfo
}
