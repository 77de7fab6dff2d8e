package httplock

// Header names and media types the middleware reads and writes.
const (
	// HeaderIdempotencyKey carries a client's idempotency key, an RFC 8941
	// structured-field String ("quoted"), as the IETF HTTPAPI draft "The
	// Idempotency-Key HTTP Header Field" (draft-ietf-httpapi-idempotency-key-header) defines it.
	HeaderIdempotencyKey = "Idempotency-Key"

	// HeaderRetryAfter tells a client how many seconds to wait before trying
	// again (RFC 9110, section 10.2.3). reqlock always sends delay-seconds.
	HeaderRetryAfter = "Retry-After"

	// ContentTypeProblem is the media type of an RFC 9457 problem details
	// body in JSON.
	ContentTypeProblem = "application/problem+json"
)
