package httplock

import (
	"errors"
	"strconv"
	"strings"
)

// FirstOf combines extractors (of any framework's KeyFunc type): the key is
// the first non-empty one; an error stops the search, except
// ErrNoContextValue, which is no key. When none has a key and one of them
// found no context value, that is the result, so the middleware can warn.
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
