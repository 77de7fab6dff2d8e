// Package rpcstatus is the one table of answers the gRPC and Connect
// adapters give a call that did not reach its handler: the code (gRPC's and
// Connect's codes have the same numbers) and a message safe to show a
// client. Each adapter turns them into its own status or error.
package rpcstatus

import (
	"errors"
	"net/http"

	"github.com/reqlock/reqlock/httplock"
)

// The codes of the table, numbered as gRPC's codes and Connect's are.
const (
	Canceled           uint32 = 1
	InvalidArgument    uint32 = 3
	ResourceExhausted  uint32 = 8
	FailedPrecondition uint32 = 9
	Aborted            uint32 = 10
	Internal           uint32 = 13
	Unavailable        uint32 = 14
)

// Code maps a rejection's reason to its code.
func Code(rej *httplock.Rejection) uint32 {
	switch {
	case errors.Is(rej, httplock.ErrLocked):
		return Aborted
	case errors.Is(rej, httplock.ErrLimitReached),
		errors.Is(rej, httplock.ErrTooManyWaiters):
		return ResourceExhausted
	case errors.Is(rej, httplock.ErrUnavailable):
		return Unavailable
	case errors.Is(rej, httplock.ErrKeyInvalid),
		errors.Is(rej, httplock.ErrKeyMissing),
		errors.Is(rej, httplock.ErrKeyTooLong):
		return InvalidArgument
	case errors.Is(rej, httplock.ErrClientGone):
		return Canceled
	case errors.Is(rej, httplock.ErrReplayMismatch),
		errors.Is(rej, httplock.ErrInDoubt): // until an operator settles the key
		return FailedPrecondition
	case errors.Is(rej, httplock.ErrNotCommitted) && rej.Status == http.StatusServiceUnavailable:
		return Unavailable // the transaction may be retried
	}
	// ErrKeyMisconfigured, ErrInvalidConfig, ErrRecordUnreadable, an answer
	// that cannot be recorded (ErrNotCommitted, 500): the server's fault,
	// logged by the engine.
	return Internal
}

// Message is the rejection's message for a client: the engine's detail,
// except where that speaks of HTTP.
func Message(rej *httplock.Rejection) string {
	if errors.Is(rej, httplock.ErrReplayMismatch) {
		return "This key was already used for a different request (another method or request message). Use a new key for a new request."
	}
	return rej.Problem.Detail
}

// RecordUnreadable is the message of the Internal answer to a call whose
// key's recorded response this server cannot rebuild (a message type it
// does not link, a damaged record).
const RecordUnreadable = "The response recorded for this key cannot be read by this server."
