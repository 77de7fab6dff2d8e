package httplock

// The outcomes a request can have, as the reqlock.outcome attribute of the
// middleware's metrics and of the request's span names them (see
// Config.Telemetry). The set is fixed: one per thing the engine does with a
// request.
const (
	// The handler ran.
	OutcomeLocked   = "locked"    // holding the key
	OutcomeUnlocked = "unlocked"  // no key, and none required
	OutcomeFailOpen = "fail_open" // store unavailable and FailOpen: unlocked
	OutcomeLockLost = "lock_lost" // holding the key, lost before the handler returned

	// The engine answered with the key's recorded response (Config.Replay).
	OutcomeReplayed = "replayed"

	// The handler ran in the store's transaction (Config.Replay on
	// pgstore.WithTx), which did not commit, so its response did not go
	// out: the request got a Rejection (ErrNotCommitted, 503 or 500).
	OutcomeNotCommitted = "not_committed"

	// The handler did not run: the request got a Rejection.
	OutcomeRejected         = "rejected"             // 409: key busy, Reject mode (also with replay in flight)
	OutcomeWaitTimeout      = "wait_timeout"         // 409: key still busy at MaxWait or the request's deadline, Wait mode
	OutcomeLimitReached     = "limit_reached"        // 429: key at its Limit (> 1), Reject mode
	OutcomeLimitWaitTimeout = "limit_wait_timeout"   // 429: key still at its Limit at MaxWait or the request's deadline, Wait mode
	OutcomeTooManyWaiters   = "too_many_waiters"     // 429
	OutcomeUnavailable      = "unavailable"          // 503: store unavailable, fail-closed
	OutcomeClientGone       = "client_gone"          // 499: the client left before the handler ran
	OutcomeKeyMissing       = "key_missing"          // 400: no key and KeyRequired
	OutcomeKeyInvalid       = "key_invalid"          // 400: the extractor's error
	OutcomeKeyTooLong       = "key_too_long"         // 400: key over MaxKeyLen
	OutcomeKeyMisconfigured = "key_misconfigured"    // 500: ErrKeyMisconfigured
	OutcomeFingerprint      = "fingerprint_mismatch" // 422: ErrReplayMismatch
	OutcomeBodyTooLarge     = "body_too_large"       // 413: replay
	OutcomeBodyUnreadable   = "body_unreadable"      // 400: replay
	OutcomeRecordUnreadable = "record_unreadable"    // 500: replay
	OutcomeInDoubt          = "in_doubt"             // 409: replay, an earlier run in doubt, RefuseInDoubt
	OutcomeMisconfigured    = "misconfigured"        // 500: ErrInvalidConfig
	OutcomeRouteUnknown     = "route_unknown"        // 500: ErrRouteUnknown
)

// rejectionOutcome names what rej says happened; mode tells a 409 or a full
// key's 429 at once from one after a wait.
func rejectionOutcome(rej *Rejection, mode Mode) string {
	switch rej.Reason {
	case ErrLocked:
		if mode == Wait {
			return OutcomeWaitTimeout
		}
		return OutcomeRejected
	case ErrLimitReached:
		if mode == Wait {
			return OutcomeLimitWaitTimeout
		}
		return OutcomeLimitReached
	case ErrTooManyWaiters:
		return OutcomeTooManyWaiters
	case ErrUnavailable:
		return OutcomeUnavailable
	case ErrClientGone:
		return OutcomeClientGone
	case ErrKeyMissing:
		return OutcomeKeyMissing
	case ErrKeyInvalid:
		return OutcomeKeyInvalid
	case ErrKeyTooLong:
		return OutcomeKeyTooLong
	case ErrKeyMisconfigured:
		return OutcomeKeyMisconfigured
	case ErrReplayMismatch:
		return OutcomeFingerprint
	case ErrBodyTooLarge:
		return OutcomeBodyTooLarge
	case ErrBodyUnreadable:
		return OutcomeBodyUnreadable
	case ErrRecordUnreadable:
		return OutcomeRecordUnreadable
	case ErrInDoubt:
		return OutcomeInDoubt
	case ErrNotCommitted:
		return OutcomeNotCommitted
	case ErrRouteUnknown:
		return OutcomeRouteUnknown
	}
	return OutcomeMisconfigured
}
