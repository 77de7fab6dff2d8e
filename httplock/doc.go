// Package httplock runs at most one HTTP request per key at a time, across
// every instance that shares a lock store: a duplicate of a request still in
// flight (a double-clicked "Pay", a retried POST) is rejected with 409 or
// queued behind the first, instead of running twice.
//
// It holds the HTTP side of reqlock for every framework: the Engine (key
// checks, scope, status codes, Retry-After, RFC 9457 bodies, waiting,
// fail-open or fail-closed, client disconnects, panics, idempotent replay)
// and the net/http
// middleware, New. The Gin and Echo adapters (packages ginlock, echolock and
// echo5lock) are thin skins over the same Engine.
//
//	lock := httplock.New(httplock.Config{
//		Locker: locker,
//		Key:    httplock.FromContext(userIDKey{}), // set by your auth middleware
//	})
//	mux.Handle("POST /orders", lock(createOrder))
//
// # What a client sees
//
// This table is the one reference for every reqlock middleware: net/http
// here, Gin (ginlock), Echo v4 (echolock) and Echo v5 (echo5lock) answer
// the same, through the same Engine.
//
//	situation                                      response
//	no key ("" from the extractor)                 handler runs unlocked
//	no key sent (header, query, param), and        400 problem+json (key_missing)
//	KeyRequired
//	FromContext finds no value                     as no key; a warning logged once per middleware
//	FromContext finds no value, and KeyRequired    500 problem+json (key_misconfigured): the
//	                                               server's fault (the lock runs before the
//	                                               middleware that sets it); an error logged
//	                                               once per burst
//	context value of a type no key can be made of  500 problem+json (key_misconfigured), logged
//	                                               as an error
//	extractor error, key over 1 KiB                400 problem+json (a key header or
//	                                               query parameter sent empty, a query
//	                                               that cannot be parsed: errors too)
//	duplicate in flight, Reject mode               409 + Retry-After
//	Wait mode, not free within MaxWait/deadline    409 + Retry-After
//	Wait mode, more than MaxWaiters waiting        429 + Retry-After
//	Limit > 1 and that many requests of the key    429 problem+json (limit_reached) +
//	in flight (Reject; Wait: still at MaxWait)     Retry-After
//	store down, slower than StoreTimeout/deadline  503 + Retry-After (FailOpen: handler runs unlocked, warning logged)
//	client disconnects while waiting               handler never runs, nothing written, no lock left
//	handler panics                                 lock released, panic passed on to the recovery middleware
//	lock lost while the handler runs               request context cancelled, cause core.ErrLockLost
//	route unknown where the middleware runs        500 problem+json (route_unknown), an error
//	(net/http: around a whole mux, chi's r.Use),   logged once per burst saying what to set;
//	and no Config.Scope                            never one lock shared by every route
//
// Retry-After is whole seconds, at least 1: the Config.RetryAfter hint
// (default 1s), cut to the holder's remaining lease when that is shorter.
// Every body the middleware writes is application/problem+json; replace any
// of them with Config.Respond.
//
// # Keys: where "who" comes from
//
// A lock key is only as trustworthy as its source. Headers and query
// parameters are whatever the client sends: use them (FromHeader,
// FromQuery, IdempotencyKey) for idempotency keys, where the client names its
// own operation, and for demos. To allow one request per user, take the user
// from what your authentication middleware verified and put on the context
// (FromContext), never from a header the client controls. FirstOf and Join
// compose extractors. IdempotencyKey takes the key quoted, as the IETF draft
// has it ("pay-1"), or plain (pay-1), as most clients send it: one key
// either way; StrictIdempotencyKey takes the draft's form only.
//
// # Scope
//
// Requests lock per scope and key. The scope defaults to method + route
// template ("POST /orders/{id}"), so one user's POST /orders and POST
// /payments do not block each other; give routes the same Config.Scope to
// make them share a lock. Scope and raw key go into the Locker's key (see
// LockKey) and are hashed there whole: nothing the client sends, and none of
// the braces in route templates, reaches Redis in clear.
//
// # Who holds a key
//
// To see who holds a request's lock, ask the Locker with the same LockKey
// the middleware builds: the scope (Config.Scope, or DefaultScope of the
// method and route template) and the raw key.
//
//	h, err := locker.Inspect(ctx, httplock.LockKey("POST /orders/{id}", userID))
//
// h says whether the key is held, by which instance (core.WithHolder), for
// how long still, its last fence and how many wait in line; nothing changes
// in the store. The reqlock command (cmd/reqlock) does the same from a
// shell: reqlock inspect -scope "POST /orders/{id}" KEY.
//
// # Replay
//
// With Config.Replay set, the middleware is an idempotency layer as the
// IETF Idempotency-Key draft and Stripe describe it: the first response to
// a key is recorded, in the same store round trip that releases the lock,
// and kept for ReplayConfig.Retention (24 h). Then:
//
//	situation                                      response
//	key with a record, same fingerprint            the recorded status, body and allowed
//	                                               headers + Idempotent-Replayed: true; handler not run
//	key with a record, another fingerprint         422 problem+json; handler not run
//	in the same scope
//	key in flight, Reject mode                     409 + Retry-After
//	key in flight, Wait mode                       waits, then the first response, replayed
//	                                               (one not recorded: the waiter runs)
//	request body over MaxRequestBody               413 problem+json
//	an earlier run lost its lock without a record  its outcome is unknown: the handler runs again
//	                                               (ReplayConfig.InDoubt core.RunAgain, the default),
//	                                               or 409 in_doubt, no Retry-After (core.RefuseInDoubt)
//	pgstore.WithTx: the handler's transaction      503 not_committed + Retry-After; 500 not_committed
//	did not commit / its response is unrecordable  when the response could not be recorded
//
// The fingerprint is method, path, query and body (DefaultFingerprint). A
// record is scoped like the lock, by method and route unless Config.Scope
// says otherwise, so a 422 happens within one scope: the same key with
// another method is another scope, and runs; give methods or routes one
// Config.Scope to make one key cover them.
//
// Not recorded, so that a retry runs the handler: 5xx, 408, 425 and 429 (see
// DefaultRecordStatus), a panic, a response whose lock was lost before the
// record was written, a body over MaxResponseBody, a flushed (streamed) or
// hijacked response, one the handler broke off after it had started (see
// Engine.ServeResponse). Only the headers in ReplayConfig.Headers are kept
// (DefaultReplayHeaders: never Set-Cookie), and of those only the ones the
// handler set: one that outer middleware put on the header map before the
// lock (a compressor's Content-Encoding) is that middleware's to set again.
// The record is written only while the lock's token still holds the key, so
// a holder that paused past its lease cannot overwrite the record of the one
// that followed it.
//
// How many times a handler's effect lands: on a pgstore made WithTx the
// handler runs in the store's transaction (pgstore.Tx(r.Context())), which
// commits its writes, its response's record and the release together;
// the response is held back until that commit, so a client never gets an
// answer whose writes were rolled back: exactly once. Elsewhere, the store
// marks each run, and a run that lost its lock without a record (a crash, a
// pause past its lease) leaves its outcome unknown: the next request runs
// again, at least once, or is refused (ReplayConfig.InDoubt), at most once,
// until the retention ends or an operator clears the key (reqlock forget).
//
// Records are scoped like locks: key a route with replay by the user and
// the Idempotency-Key, Join(FromContext(userKey{}), IdempotencyKey()), so
// that one user's key cannot fetch another's response. The Locker's store
// must keep records (Redis, Cluster, Sentinel, memory; not Redlock), and
// keep them across its own restart for a retry after one to be replayed:
// Redis with appendonly yes (RDB snapshots alone lose the records written
// since the last one; the memory store loses them all with the process). A
// middleware with replay asks a store that can tell (store.Durability) at
// start-up and logs a warning when its records will not survive a restart,
// or when it cannot tell (a Redis whose CONFIG command is renamed or
// refused).
//
// # Telemetry
//
// Config.Telemetry (nil: off) turns on OpenTelemetry metrics and annotates
// each request's span, through the OpenTelemetry API only:
//
//	reqlock.http.requests        Counter {request}; reqlock.scope,
//	                             reqlock.outcome, http.response.status_code
//	reqlock.http.wait.duration   Histogram s; reqlock.scope, reqlock.outcome
//
// reqlock.outcome names what the engine did with the request (the Outcome
// constants): locked, unlocked, fail_open, lock_lost, replayed, rejected,
// wait_timeout, limit_reached, limit_wait_timeout (a full key, Config.Limit),
// too_many_waiters, unavailable, client_gone, key_missing,
// key_invalid, key_too_long, key_misconfigured, fingerprint_mismatch,
// body_too_large, body_unreadable, record_unreadable, in_doubt,
// not_committed, misconfigured, route_unknown. The request's span (otelhttp's, otelgin's, otelecho's) gets reqlock.outcome,
// and the event reqlock.rejected when the handler did not run. No key, and
// no hash of one, is ever an attribute; see Config.Telemetry for the scope.
// Log lines carry reqlock.scope, reqlock.outcome or reqlock.reason, and
// error.
//
// # Notes
//
//   - net/http notices a client disconnect only once the request body has
//     been read (for a request without a body, at once). So Wait mode reads
//     a body of up to Config.WaitBodyLimit into memory before a request
//     waits, and the handler reads the same bytes afterwards. A request with
//     a longer body waits out MaxWait even if its client left.
//   - The lock is released before the response is finished, so a client that
//     sends its next request after reading the answer finds the key free. A
//     release the store fails is retried in the background until it is done
//     or the lease ends.
//   - Waiting across instances depends on the Locker's store. A store that
//     implements store.Waker (memory, Redis, Cluster, Sentinel, Redlock,
//     PostgreSQL, etcd) keeps a line of waiters per key across every
//     instance that shares it: they are served about in arrival order, and
//     a release wakes the next in line at once, on whichever instance it
//     waits. Redis, Cluster, Sentinel, memory and PostgreSQL hand it the
//     key with the release; on etcd the head of the line takes the key as
//     soon as it is free; Redlock wakes every waiter and hands the key to
//     none. A store
//     without it is polled with the Locker's backoff (core.WithRetry),
//     never past the holder's lease; only a release in the same Locker
//     wakes its waiter at once. Either way, on one instance the waiters of
//     a key queue locally, and only the first of them asks the store.
package httplock
