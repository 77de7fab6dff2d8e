package httplock

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
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
	h := sha256.New()
	writeField(h, []byte(r.Method))
	writeField(h, []byte(r.URL.EscapedPath()))
	writeField(h, []byte(r.URL.RawQuery))
	sum := sha256.Sum256(body)
	writeField(h, sum[:])
	return h.Sum(nil)
}

func writeField(h hash.Hash, b []byte) {
	var n [binary.MaxVarintLen64]byte
	h.Write(n[:binary.PutUvarint(n[:], uint64(len(b)))])
	h.Write(b)
}
