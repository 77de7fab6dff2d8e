package httplock

import (
	"net/http"
	"time"

	"github.com/reqlock/reqlock/core"
)

// HeaderIdempotentReplayed marks a response that is a replay of the one
// recorded for the request's key, not the handler's answer to this request:
// "Idempotent-Replayed: true", as Stripe and other idempotency-key APIs send
// it.
const HeaderIdempotentReplayed = "Idempotent-Replayed"

// Defaults for the zero fields of a ReplayConfig.
const (
	// DefaultRetention is how long a response is kept for replay.
	DefaultRetention = 24 * time.Hour
	// DefaultMaxResponseBody is the largest response body recorded.
	DefaultMaxResponseBody = 1 << 20
	// DefaultMaxRequestBody is the largest request body a route with replay
	// accepts: the body is read into memory to be fingerprinted.
	DefaultMaxRequestBody = 1 << 20
)

// ReplayConfig turns a middleware into an idempotency layer: the first
// response to a key is recorded, in the same store round trip that releases
// the lock, and a later request with the same key and the same fingerprint
// gets that response again, with Idempotent-Replayed: true, instead of
// running the handler. A request with the same key and a different
// fingerprint in the same scope gets 422. Every zero field takes its
// default.
//
// Records are scoped exactly like locks (scope + key, hashed), so with the
// default scope a key sent with another method or to another route finds
// no record and runs; give those routes one Config.Scope for one key to
// cover them. Combine the authenticated user with the Idempotency-Key, as
// in Join(FromContext(userKey{}), IdempotencyKey()), so that one client's
// key can never fetch another's response.
type ReplayConfig struct {
	// Retention is how long a recorded response is replayed
	// (default DefaultRetention, 24 h). Afterwards the key is free again.
	Retention time.Duration

	// RecordStatus says which statuses are recorded (default
	// DefaultRecordStatus: all but 5xx, 408, 425 and 429). A response that
	// is not recorded leaves the key free, so a retry runs the handler.
	RecordStatus func(status int) bool

	// Headers lists the response headers recorded and replayed (default
	// DefaultReplayHeaders()); any other header, Set-Cookie above all, is
	// left out of the record. An empty, non-nil list records none.
	Headers []string

	// MaxResponseBody is the largest response body recorded (default
	// DefaultMaxResponseBody, 1 MiB); a longer response is sent as usual
	// and not recorded.
	MaxResponseBody int

	// MaxRequestBody is the largest request body accepted (default
	// DefaultMaxRequestBody, 1 MiB): it is read into memory to be
	// fingerprinted before the lock is taken; a longer one gets 413.
	MaxRequestBody int64

	// Fingerprint tells requests that share a key apart (default
	// DefaultFingerprint: method, path, query and body). A recorded
	// response is replayed only to a request with the same fingerprint;
	// another gets 422. body is the whole request body.
	Fingerprint func(r *http.Request, body []byte) []byte

	// InDoubt is what a request gets when the run before it lost its lock
	// without a record (it crashed, paused past its lease, or the store
	// lost the lock), so that whether its effect landed is unknown:
	//   - core.RunAgain (the default): the handler runs again, and a
	//     warning is logged. At least once, never silently twice.
	//   - core.RefuseInDoubt: the handler does not run; the request gets
	//     409 in_doubt (ErrInDoubt), and so does every request of the key
	//     until Retention ends or an operator who settled the run clears
	//     the key ("reqlock forget", core.Locker.ForgetRun). At most once.
	//     It needs a store that marks runs (core.Locker.MarksRuns; every
	//     store that keeps records does), or one that runs handlers in
	//     its transaction (pgstore.WithTx), where no run is ever in doubt.
	// The Locker's own core.WithDoubtPolicy(core.RefuseInDoubt) refuses
	// too.
	InDoubt core.DoubtPolicy
}

// DefaultRecordStatus records every status but those that say the request
// did not get its answer: 5xx (the server failed), 408 Request Timeout, 425
// Too Early and 429 Too Many Requests (come back later). Replaying one of
// those for the rest of the retention would turn a passing failure into a
// permanent one.
func DefaultRecordStatus(status int) bool {
	switch {
	case status < 200 || status >= 500:
		return false
	case status == http.StatusRequestTimeout, status == http.StatusTooEarly, status == http.StatusTooManyRequests:
		return false
	}
	return true
}

// DefaultReplayHeaders returns the headers a replay carries unless
// ReplayConfig.Headers says otherwise: those that describe the recorded body
// (Content-Type, Content-Encoding, Content-Language, Content-Disposition,
// Content-Location), point at what the request made or where to go next
// (Location, Link, Retry-After), or state the representation's version and
// caching (ETag, Last-Modified, Cache-Control). Left out on purpose:
// Set-Cookie and anything else that is a secret or state of one response,
// values that are about the moment (Date, Expires, Age), and headers net/http
// works out itself (Content-Length, Transfer-Encoding, Connection).
func DefaultReplayHeaders() []string {
	return []string{
		"Content-Type", "Content-Encoding", "Content-Language", "Content-Disposition", "Content-Location",
		"Location", "Link", "Retry-After",
		"ETag", "Last-Modified", "Cache-Control",
	}
}

// replayOpts is a ReplayConfig with its defaults filled in.
type replayOpts struct {
	retention    time.Duration
	recordStatus func(int) bool
	headers      []string          // canonical
	allowed      map[string]string // each of headers, to itself
	maxResponse  int
	maxRequest   int64
	fingerprint  func(*http.Request, []byte) []byte
	doubt        core.DoubtPolicy
}

// withDefaults fills c's zero fields and checks c against l's store.
func (c *ReplayConfig) withDefaults(l *core.Locker) (*replayOpts, error) {
	switch {
	case c.InDoubt != core.RunAgain && c.InDoubt != core.RefuseInDoubt:
		return nil, badField("Replay.InDoubt", "is not core.RunAgain or core.RefuseInDoubt", nil)
	case c.InDoubt == core.RefuseInDoubt && !l.RecordsInUnit() && !l.MarksRuns():
		return nil, badField("Replay.InDoubt", "is core.RefuseInDoubt, and the Locker's store cannot tell a run in doubt", core.ErrNoRunMarks)
	case c.Retention < 0:
		return nil, negative("Replay.Retention", c.Retention)
	case c.MaxResponseBody < 0:
		return nil, negative("Replay.MaxResponseBody", c.MaxResponseBody)
	case c.MaxRequestBody < 0:
		return nil, negative("Replay.MaxRequestBody", c.MaxRequestBody)
	}
	o := &replayOpts{
		retention:    c.Retention,
		recordStatus: c.RecordStatus,
		maxResponse:  c.MaxResponseBody,
		maxRequest:   c.MaxRequestBody,
		fingerprint:  c.Fingerprint,
		doubt:        c.InDoubt,
	}
	if o.retention == 0 {
		o.retention = DefaultRetention
	}
	if o.recordStatus == nil {
		o.recordStatus = DefaultRecordStatus
	}
	if o.maxResponse == 0 {
		o.maxResponse = DefaultMaxResponseBody
	}
	if o.maxRequest == 0 {
		o.maxRequest = DefaultMaxRequestBody
	}
	if o.fingerprint == nil {
		o.fingerprint = DefaultFingerprint
	}
	names := c.Headers
	if names == nil {
		names = DefaultReplayHeaders()
	}
	o.allowed = make(map[string]string, len(names))
	for _, h := range names {
		h = http.CanonicalHeaderKey(h)
		o.headers = append(o.headers, h)
		o.allowed[h] = h
	}
	return o, nil
}
