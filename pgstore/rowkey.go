package pgstore

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// maxRowKey is the longest key stored as it is: a text primary key
// refuses NUL and bytes that are not UTF-8, and its btree refuses an
// entry over about 2.7 KB that does not compress.
const maxRowKey = 512

// digestMark starts a row key that is a digest: no key stored as it is
// starts with it, so the two kinds never meet.
const digestMark = "\x01"

// rowKey is the key's row in the tables: the key itself when the column
// takes it as it is, else digestMark and the hex SHA-256 of its bytes, a
// fixed size for any prefix core.WithPrefix accepts. Wake-ups of a digest
// key go out as "any key" (see reqlock_tell).
func rowKey(key string) string {
	if len(key) <= maxRowKey && utf8.ValidString(key) && !strings.ContainsRune(key, 0) &&
		!strings.HasPrefix(key, digestMark) {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return digestMark + hex.EncodeToString(sum[:])
}
