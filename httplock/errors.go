package httplock

import (
	"errors"
	"fmt"
)

// Why a request did not reach the handler. A *Rejection wraps exactly one of
// these; test for them with errors.Is.
var (
	// ErrKeyInvalid means the key extractor returned an error (400).
	ErrKeyInvalid = errors.New("reqlock: invalid lock key")
	// ErrKeyMissing means the request brought no key (no header, query or
	// route parameter) and Config.KeyRequired is set (400). A key the
	// server's context should have held is ErrKeyMisconfigured instead.
	ErrKeyMissing = errors.New("reqlock: lock key required")
	// ErrKeyTooLong means the key is longer than MaxKeyLen bytes (400).
	ErrKeyTooLong = errors.New("reqlock: lock key too long")
	// ErrLocked means another request with the same key is in flight (409):
	// at once in Reject mode, after MaxWait in Wait mode.
	ErrLocked = errors.New("reqlock: request with the same key in progress")
	// ErrTooManyWaiters means more than MaxWaiters requests already wait for
	// the key on this instance (429).
	ErrTooManyWaiters = errors.New("reqlock: too many requests waiting for the same key")
	// ErrLimitReached means the key already has Config.Limit requests in
	// flight (Limit > 1): 429, at once in Reject mode, after MaxWait in Wait
	// mode. A duplicate of a key that admits one request is ErrLocked.
	ErrLimitReached = errors.New("reqlock: the key's limit of requests in flight is reached")
	// ErrUnavailable means the lock store failed or did not answer within
	// StoreTimeout (503). The Rejection also wraps the store's error
	// (core.ErrUnavailable).
	ErrUnavailable = errors.New("reqlock: lock store unavailable")
	// ErrKeyMisconfigured means the server, not the client, is at fault
	// (500): the key extractor's error wraps it (ErrKeyType does), as when a
	// context value has a type no key can be made of, or the context holds
	// no value for the key of a route with Config.KeyRequired (the cause is
	// then ErrNoContextValue). The middleware logs it as an error, at most
	// once per burst.
	ErrKeyMisconfigured = errors.New("reqlock: lock key misconfigured")
	// ErrClientGone means the request's context was cancelled (the client
	// disconnected) before the handler could run. Nobody is left to read a
	// response, so the default responders write none; the status is the
	// conventional 499 for logs. A deadline on the context (a timeout
	// middleware) is not that: it gets a 409 or a 503 as usual.
	ErrClientGone = errors.New("reqlock: client went away while waiting")

	// ErrReplayMismatch means the key has a recorded response to a
	// different request (another method, path, query or body: another
	// fingerprint) (422). Nothing runs: a client reused a key, or changed a
	// request it retried.
	ErrReplayMismatch = errors.New("reqlock: idempotency key reused for a different request")
	// ErrBodyTooLarge means a request body on a route with replay is longer
	// than ReplayConfig.MaxRequestBody, or than a limit an outer
	// http.MaxBytesReader set (413).
	ErrBodyTooLarge = errors.New("reqlock: request body too large to fingerprint")
	// ErrBodyUnreadable means the request body, needed for the fingerprint,
	// could not be read (400).
	ErrBodyUnreadable = errors.New("reqlock: request body could not be read")
	// ErrRecordUnreadable means the key's record cannot be read by this
	// version: damaged, written by a newer version, or not a response (500,
	// logged as an error).
	ErrRecordUnreadable = errors.New("reqlock: recorded response cannot be read")
	// ErrInDoubt means an earlier request with the key lost its lock
	// without a record, so whether its effect landed is unknown, and
	// ReplayConfig.InDoubt is core.RefuseInDoubt (409, no Retry-After:
	// retrying does not help until ReplayConfig.Retention ends or an
	// operator clears the key). The Rejection also wraps core.ErrInDoubt.
	ErrInDoubt = errors.New("reqlock: an earlier request with the key lost its lock without a record: its outcome is unknown")
	// ErrNotCommitted means the handler ran in the store's transaction
	// (pgstore.WithTx) and its response could not be committed with it:
	// the commit failed (503 + Retry-After: a retry gets the response
	// if the commit landed after all, or runs the handler again), or the
	// response could not be recorded (500: its body outgrew
	// ReplayConfig.MaxResponseBody, or the handler broke it off). Nothing
	// of the handler's response went out, and its writes through the
	// transaction were rolled back.
	ErrNotCommitted = errors.New("reqlock: the handler's transaction did not commit")

	// ErrRouteUnknown means the middleware does not know the request's
	// route and Config.Scope is not set (500, logged as an error at most
	// once per burst): net/http's r.Pattern is empty where the middleware
	// runs, as when it wraps a whole mux or runs before the router (chi's
	// router-wide Use). Every route of a method would otherwise share one
	// lock, and one user's POST /profile would answer 409 while their POST
	// /orders runs. Wrap each route's handler instead (ServeMux:
	// mux.Handle(pattern, lock(h)); chi: r.With(lock)), or set Scope.
	ErrRouteUnknown = errors.New("reqlock: the request's route is unknown where the middleware runs")

	// ErrInvalidConfig is wrapped by the error NewEngine returns for a
	// Config it cannot work with. It is also the reason (500) when an engine
	// with Replay is used through Serve or ServeRequest, which cannot
	// replay.
	ErrInvalidConfig = errors.New("reqlock: invalid middleware config")
)

// Errors the key extractors return; the middleware answers them with 400.
var (
	// ErrMultipleValues means a header or query parameter that names the key
	// appears more than once: which one is the key would be a guess.
	ErrMultipleValues = errors.New("reqlock: key given more than once")
	// ErrEmptyValue means the header or query parameter that names the key
	// is there but empty: the client meant to send a key, so running the
	// request without one would be wrong.
	ErrEmptyValue = errors.New("reqlock: key given empty")
	// ErrQuerySyntax means the query string cannot be parsed, so which key
	// it carries would be a guess.
	ErrQuerySyntax = errors.New("reqlock: query string cannot be parsed")
	// ErrIdempotencyKeySyntax means the Idempotency-Key header is not a
	// structured-field String.
	ErrIdempotencyKeySyntax = errors.New("reqlock: Idempotency-Key is not a structured-field string")
	// ErrKeyType means a context value has a type KeyOf cannot turn into a
	// key. It wraps ErrKeyMisconfigured: the middleware answers 500, since
	// only the server's code can fix it.
	ErrKeyType = fmt.Errorf("%w: context value cannot be a lock key", ErrKeyMisconfigured)
	// ErrNoContextValue means FromContext found no value under its key; a
	// KeyFunc of your own that reads the context should return it (or wrap
	// it) for a missing value too. The middleware takes it as no key: the
	// request runs unlocked, and a warning is logged once per middleware.
	// With Config.KeyRequired it is the server's fault, not the client's:
	// 500 with ErrKeyMisconfigured, logged as an error at most once per
	// burst. The usual cause is the lock placed before the middleware that
	// sets the value. FirstOf goes on to its next extractor.
	ErrNoContextValue = errors.New("reqlock: no value on the request context for the lock key")
)

// StatusClientClosedRequest is the status recorded for ErrClientGone. It is
// not in RFC 9110; proxies and log tools know it as "client closed request".
const StatusClientClosedRequest = 499
