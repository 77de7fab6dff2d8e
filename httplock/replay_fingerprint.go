package httplock

import (
	"crypto/sha256"
	"encoding/binary"
	"net/http"
)

// DefaultFingerprint is what tells two requests with the same key apart:
// SHA-256 over the method, the path as sent, the raw query and the SHA-256
// of the body, each length-prefixed so that no two requests run together
// into the same input. It takes the path, not the route template: with a
// template, the same key sent to POST /orders/1 and then to POST /orders/2
// would replay the first order's response for the second. Headers are left
// out (a retry may carry a new Authorization or trace header); write your
// own Fingerprint to add one, or to hash a canonical form of the body.
func DefaultFingerprint(r *http.Request, body []byte) []byte {
	// The hashed input is built in one buffer, on the stack for a usual
	// request, rather than written field by field through hash.Hash, whose
	// interface calls put every field on the heap.
	var buf [256]byte
	in := appendField(buf[:0], r.Method)
	in = appendField(in, r.URL.EscapedPath())
	in = appendField(in, r.URL.RawQuery)
	sum := sha256.Sum256(body)
	in = appendField(in, sum[:])
	out := sha256.Sum256(in)
	return out[:]
}

// appendField appends s, length-prefixed, to b.
func appendField[T string | []byte](b []byte, s T) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}
