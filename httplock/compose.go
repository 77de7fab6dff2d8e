package httplock

import (
	"strconv"
	"strings"
)

// FirstOf combines extractors (of any framework's KeyFunc type): the key is
// the first non-empty one; an error stops the search.
//
//	httplock.FirstOf(httplock.IdempotencyKey(), httplock.FromContext(userKey{}))
func FirstOf[F ~func(In) (string, error), In any](fns ...F) F {
	return func(in In) (string, error) {
		for _, f := range fns {
			if k, err := f(in); err != nil || k != "" {
				return k, err
			}
		}
		return "", nil
	}
}

// Join combines extractors (of any framework's KeyFunc type) into one key
// made of all their keys, such as user + order: one request per user per
// order. If any of them finds no key, there is no key. The parts are
// length-prefixed, so different parts never join into the same key.
func Join[F ~func(In) (string, error), In any](fns ...F) F {
	return func(in In) (string, error) {
		var b strings.Builder
		for _, f := range fns {
			k, err := f(in)
			if err != nil || k == "" {
				return "", err
			}
			b.WriteString(strconv.Itoa(len(k)))
			b.WriteByte(':')
			b.WriteString(k)
		}
		return b.String(), nil
	}
}
