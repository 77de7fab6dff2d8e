package core

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// hashLen is how many bytes of SHA-256 name a key: 128 bits keep accidental
// and crafted collisions out of reach while the Redis key stays short.
const hashLen = 16

// storeKey turns a caller's key into prefix + "{hash}". The raw key never
// reaches the store: whatever it holds ({, }, *, newlines, invalid UTF-8, a
// megabyte of text) becomes 22 URL-safe characters inside one hash tag, so it
// can neither leave the namespace nor pick its Cluster slot.
func storeKey(prefix, key string) (string, error) {
	if key == "" {
		return "", ErrEmptyKey
	}
	sum := sha256.Sum256([]byte(key))
	var b strings.Builder
	b.Grow(len(prefix) + 2 + base64.RawURLEncoding.EncodedLen(hashLen))
	b.WriteString(prefix)
	b.WriteByte('{')
	var enc [24]byte
	base64.RawURLEncoding.Encode(enc[:], sum[:hashLen])
	b.Write(enc[:base64.RawURLEncoding.EncodedLen(hashLen)])
	b.WriteByte('}')
	return b.String(), nil
}

// validPrefix reports whether p can start a key without breaking the hash
// tag that follows it: Redis Cluster hashes the first {...} in a key.
func validPrefix(p string) bool {
	return !strings.ContainsAny(p, "{}")
}
