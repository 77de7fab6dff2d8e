package httplock

import (
	"errors"
	"net/http"
	"time"
)

// Rejection is why a request did not reach its handler and what to answer.
// Config.Respond (and the adapters' equivalents) receive it; switch on the
// reason with errors.Is(rej, ErrLocked) and friends. It also unwraps to the
// underlying cause: the extractor's error, core.ErrNotObtained,
// core.ErrUnavailable or the context's error.
type Rejection struct {
	// Status is the HTTP status: 400, 409, 413, 422, 429, 500, 503, or 499
	// for ErrClientGone.
	Status int
	// RetryAfter is the delay to send in Retry-After, in whole seconds; 0
	// means no header.
	RetryAfter time.Duration
	// Problem is the default RFC 9457 body.
	Problem Problem
	// Reason is one of ErrKeyInvalid, ErrKeyMissing, ErrKeyTooLong,
	// ErrKeyMisconfigured, ErrLocked, ErrLimitReached, ErrTooManyWaiters, ErrUnavailable,
	// ErrClientGone, ErrRouteUnknown, and with replay ErrReplayMismatch, ErrBodyTooLarge,
	// ErrBodyUnreadable, ErrRecordUnreadable, ErrInDoubt, ErrNotCommitted
	// or ErrInvalidConfig.
	Reason error
	// Cause is the error behind Reason, or nil.
	Cause error
}

// Error describes the rejection for logs.
func (r *Rejection) Error() string {
	if r.Cause != nil {
		return r.Reason.Error() + ": " + r.Cause.Error()
	}
	return r.Reason.Error()
}

// Unwrap returns the reason and the cause, for errors.Is and errors.As.
func (r *Rejection) Unwrap() []error {
	switch {
	case r == nil: // a nil *Rejection in an error: no reason, nothing to match
		return nil
	case r.Cause == nil:
		return []error{r.Reason}
	}
	return []error{r.Reason, r.Cause}
}

// RetryAfterHeader is the Retry-After value to send, or "" for none.
func (r *Rejection) RetryAfterHeader() string {
	if r.RetryAfter <= 0 {
		return ""
	}
	return formatRetryAfter(r.RetryAfter)
}

// SetHeaders sets the headers that belong to the answer to r whatever
// renders its body: Retry-After when there is one, and Cache-Control:
// no-store (a 409 is about this moment). It sets nothing when the client is
// gone.
func (r *Rejection) SetHeaders(h http.Header) {
	if r.Clientless() {
		return
	}
	if s := r.RetryAfterHeader(); s != "" {
		h.Set(HeaderRetryAfter, s)
	}
	h.Set("Cache-Control", "no-store")
}

// Clientless reports whether the client is gone, so that writing a response
// is pointless.
func (r *Rejection) Clientless() bool { return errors.Is(r.Reason, ErrClientGone) }

// reject builds a Rejection with the default problem body.
func reject(reason, cause error, retry time.Duration) *Rejection {
	status, code, detail := describe(reason, cause)
	title := http.StatusText(status)
	if status == StatusClientClosedRequest {
		title = "Client Closed Request"
	}
	return &Rejection{
		Status:     status,
		RetryAfter: retry,
		Reason:     reason,
		Cause:      cause,
		Problem: Problem{
			Type:   "about:blank",
			Title:  title,
			Status: status,
			Detail: detail,
			Code:   code,
		},
	}
}

// describe maps a reason to its status, problem code and a detail safe to
// show a client: extractor errors of the application's own may say more
// than a client should read, so only reqlock's own causes are spelled out.
func describe(reason, cause error) (status int, code, detail string) {
	switch reason {
	case ErrKeyInvalid:
		detail = "The request's lock key could not be read."
		switch {
		case errors.Is(cause, ErrIdempotencyKeySyntax):
			detail = `Idempotency-Key must be one structured-field string, for example: Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324".`
		case errors.Is(cause, ErrMultipleValues):
			detail = "The request's lock key is given more than once."
		case errors.Is(cause, ErrEmptyValue):
			detail = "The request's lock key is given empty."
		case errors.Is(cause, ErrQuerySyntax):
			detail = "The request's query string cannot be parsed."
		}
		return http.StatusBadRequest, "key_invalid", detail
	case ErrKeyMissing:
		return http.StatusBadRequest, "key_missing", "This endpoint needs a lock key and the request has none."
	case ErrKeyTooLong:
		return http.StatusBadRequest, "key_too_long", "The request's lock key is longer than 1024 bytes."
	case ErrKeyMisconfigured:
		return http.StatusInternalServerError, "key_misconfigured", "The server could not work out this request's lock key."
	case ErrLocked:
		return http.StatusConflict, "locked", "A request with the same key is in progress. Retry after it completes."
	case ErrLimitReached:
		return http.StatusTooManyRequests, "limit_reached", "This endpoint runs a limited number of requests with the same key at once, and that many are in progress. Retry later."
	case ErrTooManyWaiters:
		return http.StatusTooManyRequests, "too_many_waiters", "Too many requests with the same key are waiting. Retry later."
	case ErrUnavailable:
		return http.StatusServiceUnavailable, "lock_unavailable", "Duplicate-request protection is unavailable. Retry later."
	case ErrClientGone:
		return StatusClientClosedRequest, "client_gone", "The client went away before the request could run."
	case ErrReplayMismatch:
		return http.StatusUnprocessableEntity, "idempotency_key_reused", "This key was already used for a different request (method, path, query or body). Use a new key for a new request."
	case ErrBodyTooLarge:
		return http.StatusRequestEntityTooLarge, "body_too_large", "The request body is too large for this endpoint."
	case ErrBodyUnreadable:
		return http.StatusBadRequest, "body_unreadable", "The request body could not be read."
	case ErrRecordUnreadable:
		return http.StatusInternalServerError, "record_unreadable", "The response recorded for this key cannot be read by this server."
	case ErrInDoubt:
		return http.StatusConflict, "in_doubt", "An earlier request with this key was interrupted, and whether it took effect is unknown. It is not run again: check its outcome, then use a new key."
	case ErrNotCommitted:
		if errors.Is(cause, errNotRecordable) {
			return http.StatusInternalServerError, "not_committed", "The server could not record its answer to this request, so it undid it. Retrying will fail the same way."
		}
		return http.StatusServiceUnavailable, "not_committed", "The server could not commit this request's changes. Retry: you get the answer if they landed after all, or the request runs again."
	case ErrRouteUnknown:
		return http.StatusInternalServerError, "route_unknown", "The server's duplicate-request protection does not know this request's route."
	case ErrInvalidConfig:
		return http.StatusInternalServerError, "misconfigured", "The server's duplicate-request protection is misconfigured."
	}
	return http.StatusInternalServerError, "", ""
}
