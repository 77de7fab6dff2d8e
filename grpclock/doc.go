// Package grpclock runs at most one gRPC call per key at a time across a
// service's instances: a unary and a stream server interceptor over the
// same engine as reqlock's HTTP middleware (httplock), on any core.Locker
// store. Retries from clients, Envoy or a service mesh that land while the
// first call still runs get an answer they know how to treat, instead of
// running twice.
//
//	srv := grpc.NewServer(
//		grpc.ChainUnaryInterceptor(recovery, auth,
//			grpclock.UnaryServerInterceptor(httplock.Config{
//				Locker: locker,
//				Key:    httplock.FromContext(userKey{}), // one call per user
//			})),
//	)
//
// The interceptors take httplock.Config and httplock's key functions as
// they are: FromHeader and IdempotencyKey read the incoming metadata (a
// client-chosen idempotency key), FromContext a value your auth interceptor
// put on the context (who the user is), FromMessage the request message,
// and Join several of them. The settings only an HTTP response has
// (Respond, WaitBodyLimit, Replay's RecordStatus, Headers, MaxRequestBody
// and Fingerprint) are refused by name. The lock scope is the full method name
// unless Config.Scope says otherwise; keys are hashed with it, so no user
// text reaches the store as is. A key longer than httplock.MaxKeyLen bytes
// is refused.
//
// A call that does not reach its handler is answered with a status (Status
// builds it) whose message is safe to show a client:
//
//	duplicate in flight (Reject, or Wait past MaxWait)  Aborted + RetryInfo
//	key full: Limit > 1 calls of it in flight           ResourceExhausted + RetryInfo
//	  (Reject, or Wait past MaxWait)
//	too many calls waiting for the key (Wait mode)      ResourceExhausted + RetryInfo
//	store down or too slow (fail-closed, the default)   Unavailable + RetryInfo
//	store down with FailOpen                            the handler runs, unlocked
//	key given twice or empty, too long, or missing      InvalidArgument
//	  with KeyRequired; an error from FromMessage's func
//	the key reused for another request (Replay)         FailedPrecondition
//	an earlier call in doubt (Replay, RefuseInDoubt)    FailedPrecondition
//	the handler's transaction did not commit            Unavailable + RetryInfo
//	  (Replay on pgstore.WithTx)
//	key misconfigured (no context value with            Internal, logged by the engine
//	  KeyRequired, a value of an unusable type,
//	  FromMessage on a stream)
//	client gone while waiting                           Canceled
//
// RetryInfo's delay is the engine's Retry-After hint: one second, in
// whole seconds. The handler gets a context that carries the lock
// (core.FromContext) and is cancelled with cause core.ErrLockLost if the lock
// is lost. The lock is released when the handler returns or panics, and a
// stream's lock is held until its handler returns. With Config.Replay, the
// response to a unary call's key is recorded and returned to a retry with
// the same request, with "idempotent-replayed: true" in the header metadata;
// streams are locked, never replayed.
package grpclock
