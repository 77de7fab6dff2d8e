package connectlock

import (
	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/rpcstatus"
)

// Error is the Connect answer to a call that did not reach its handler, by
// the table in the package doc. Its message is written to be safe to show a
// client; a retryable answer carries a RetryInfo detail with the delay the
// engine suggests. On the server it unwraps to rej, for errors.Is(err,
// httplock.ErrLocked) and friends in an interceptor outside this one.
func Error(rej *httplock.Rejection) *connect.Error {
	err := connect.NewError(connect.Code(rpcstatus.Code(rej)), rejection{rej})
	if rej.RetryAfter <= 0 {
		return err
	}
	if d, derr := connect.NewErrorDetail(&errdetails.RetryInfo{RetryDelay: durationpb.New(rej.RetryAfter)}); derr == nil {
		err.AddDetail(d)
	} // else cannot happen for a RetryInfo; the code alone still says it
	return err
}

// rejection is the error under a Connect error: its text is the client's
// message, and it unwraps to the rejection.
type rejection struct{ rej *httplock.Rejection }

func (r rejection) Error() string { return rpcstatus.Message(r.rej) }
func (r rejection) Unwrap() error { return r.rej }
