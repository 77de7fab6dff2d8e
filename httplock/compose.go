package httplock

import (
	"errors"
	"strconv"
	"strings"
)

// FirstOf combines extractors (of any framework's KeyFunc type): the key is
// the first non-empty one; an error stops the search, except
// ErrNoContextValue, which is no key. When none has a key and one of them
// found no context value, that is the result, so the middleware can warn
// (or, with Config.KeyRequired, answer 500: the server failed to set it).
//
//	httplock.FirstOf(httplock.IdempotencyKey(), httplock.FromContext(userKey{}))
func FirstOf[F ~func(In) (string, error), In any](fns ...F) F {
	return func(in In) (string, error) {
		var absent error
		for _, f := range fns {
			k, err := f(in)
			if errors.Is(err, ErrNoContextValue) {
				absent = err
				continue
			}
			if err != nil || k != "" {
				return k, err
			}
		}
		return "", absent
	}
}

// Join combines extractors (of any framework's KeyFunc type) into one key
// made of all their keys, such as user + order: one request per user per
// order. If any of them finds no key, there is no key (and
// ErrNoContextValue stays itself, for the middleware's warning). The parts are
// length-prefixed, so different parts never join into the same key: the key
// is JoinKeys of the parts.
func Join[F ~func(In) (string, error), In any](fns ...F) F {
	return func(in In) (string, error) {
		var b strings.Builder
		for _, f := range fns {
			k, err := f(in)
			if err != nil || k == "" {
				return "", err
			}
			joinPart(&b, k)
		}
		return b.String(), nil
	}
}

// JoinKeys is the key Join makes of these parts, in order: each part as its
// length in bytes (decimal), a colon, and the part itself, all run
// together. JoinKeys("user-42", "pay-1") is "7:user-425:pay-1". Use it to
// find or take outside HTTP the lock of a route keyed with Join, with
// LockKey for its scope.
func JoinKeys(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		joinPart(&b, p)
	}
	return b.String()
}

// joinPart appends one length-prefixed part.
func joinPart(b *strings.Builder, part string) {
	b.WriteString(strconv.Itoa(len(part)))
	b.WriteByte(':')
	b.WriteString(part)
}
