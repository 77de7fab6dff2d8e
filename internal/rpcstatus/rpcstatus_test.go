package rpcstatus

import (
	"net/http"
	"testing"

	"go.uber.org/goleak"

	"github.com/reqlock/reqlock/httplock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestCode(t *testing.T) {
	for reason, want := range map[error]uint32{
		httplock.ErrLocked:           Aborted,
		httplock.ErrLimitReached:     ResourceExhausted,
		httplock.ErrTooManyWaiters:   ResourceExhausted,
		httplock.ErrUnavailable:      Unavailable,
		httplock.ErrKeyInvalid:       InvalidArgument,
		httplock.ErrKeyMissing:       InvalidArgument,
		httplock.ErrKeyTooLong:       InvalidArgument,
		httplock.ErrClientGone:       Canceled,
		httplock.ErrReplayMismatch:   FailedPrecondition,
		httplock.ErrKeyMisconfigured: Internal,
		httplock.ErrInvalidConfig:    Internal,
		httplock.ErrRecordUnreadable: Internal,
		httplock.ErrInDoubt:          FailedPrecondition,
	} {
		if got := Code(&httplock.Rejection{Reason: reason}); got != want {
			t.Errorf("%v: code %d, want %d", reason, got, want)
		}
	}
	// A transaction that did not commit may be retried (503); an answer
	// that cannot be recorded fails again (500).
	for status, want := range map[int]uint32{http.StatusServiceUnavailable: Unavailable, http.StatusInternalServerError: Internal} {
		if got := Code(&httplock.Rejection{Reason: httplock.ErrNotCommitted, Status: status}); got != want {
			t.Errorf("not committed, %d: code %d, want %d", status, got, want)
		}
	}
}

func TestMessage(t *testing.T) {
	rej := &httplock.Rejection{Reason: httplock.ErrLocked, Problem: httplock.Problem{Detail: "engine's"}}
	if got := Message(rej); got != "engine's" {
		t.Errorf("Message = %q, want the engine's detail", got)
	}
	if got := Message(&httplock.Rejection{Reason: httplock.ErrReplayMismatch, Problem: httplock.Problem{Detail: "path, query or body"}}); got == "path, query or body" {
		t.Error("the mismatch message speaks of HTTP")
	}
}
