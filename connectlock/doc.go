// Package connectlock runs at most one Connect call per key at a time
// across a service's instances: a connect.Interceptor, for unary and
// streaming handlers, over the same engine as reqlock's HTTP middleware
// (httplock), on any core.Locker store. A retry that lands while the first
// call still runs gets a code Connect clients know how to treat (never the
// CodeUnknown a 409 from HTTP middleware turns into), and with Replay a
// unary retry gets the first call's response instead of running again.
//
//	lock, err := connectlock.NewInterceptor(httplock.Config{
//		Locker: locker,
//		Key:    httplock.FromContext(userKey{}), // one call per user
//	})
//	mux.Handle(ordersv1connect.NewOrdersHandler(srv,
//		connect.WithRecover(onPanic), connect.WithInterceptors(auth, lock)))
//
// The interceptors take httplock.Config and httplock's key functions as
// they are: FromHeader and IdempotencyKey read the request header (a
// client-chosen idempotency key), FromContext a value your auth interceptor
// put on the context (who the user is), FromMessage the request message,
// and Join several of them. The settings only an HTTP response has
// (Respond, WaitBodyLimit, Replay's RecordStatus, Headers, MaxRequestBody
// and Fingerprint) are refused by name. The lock scope is the procedure ("/pkg.Service/Method")
// unless Config.Scope says otherwise; keys are hashed with it, so no user
// text reaches the store as is. A key longer than httplock.MaxKeyLen bytes
// is refused.
//
// A call that does not reach its handler gets an error (Error builds it)
// whose message is safe to show a client:
//
//	duplicate in flight (Reject, or Wait past MaxWait)  CodeAborted + RetryInfo
//	key full: Limit > 1 calls of it in flight           CodeResourceExhausted + RetryInfo
//	  (Reject, or Wait past MaxWait)
//	too many calls waiting for the key (Wait mode)      CodeResourceExhausted + RetryInfo
//	store down or too slow (fail-closed, the default)   CodeUnavailable + RetryInfo
//	store down with FailOpen                            the handler runs, unlocked
//	key given twice or empty, too long, or missing      CodeInvalidArgument
//	  with KeyRequired; an error from FromMessage's func
//	the key reused for another request (Replay)         CodeFailedPrecondition
//	an earlier call in doubt (Replay, RefuseInDoubt)    CodeFailedPrecondition
//	the handler's transaction did not commit            CodeUnavailable + RetryInfo
//	  (Replay on pgstore.WithTx)
//	key misconfigured (no context value with            CodeInternal, logged by the engine
//	  KeyRequired, a value of an unusable type,
//	  FromMessage on a stream)
//	client gone while waiting                           CodeCanceled
//
// RetryInfo's delay is the engine's Retry-After hint: one second, in whole
// seconds. The handler gets a context that carries the lock
// (core.FromContext) and is cancelled with cause core.ErrLockLost if the
// lock is lost. The lock is released when the handler returns or panics.
// With Replay, the response to a unary call's key is recorded and returned
// to a retry with the same request, with "Idempotent-Replayed: true";
// streams are locked, never replayed.
package connectlock
