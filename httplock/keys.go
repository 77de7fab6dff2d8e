package httplock

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
)

// KeyFunc extracts the raw lock key from a request. "" means the request has
// no key; an error is answered with 400.
type KeyFunc func(r *http.Request) (string, error)

// FromHeader uses a request header. A header the client sets is for
// idempotency keys and demos: never use it to say who the user is, since
// anyone can send any value. No such header means no key; more than one
// line of it, or one that is empty, is an error.
func FromHeader(name string) KeyFunc {
	name = http.CanonicalHeaderKey(name)
	return func(r *http.Request) (string, error) { return given(headerValues(r, name)) }
}

// FromQuery uses a URL query parameter. No such parameter means no key; one
// given more than once or empty, or a query string that cannot be parsed
// at all (a bad %-escape, a ';'), is an error: URL.Query would drop the bad
// pairs, and the request would run without its key.
func FromQuery(name string) KeyFunc {
	return func(r *http.Request) (string, error) {
		if _, ok := calls.From(r); ok {
			return "", errQueryOnCall
		}
		q, err := url.ParseQuery(rawQuery(r))
		if err != nil {
			return "", fmt.Errorf("%w: %w", ErrQuerySyntax, err)
		}
		return given(q[name])
	}
}

// FromPathValue uses a wildcard of the route's ServeMux pattern, as
// r.PathValue returns it ("id" in "POST /orders/{id}"). On a request an
// adapter not on net/http made (FrameworkContext.View) it reports
// ErrKeyMisconfigured: use that adapter's FromParam.
func FromPathValue(name string) KeyFunc {
	return func(r *http.Request) (string, error) {
		if _, ok := viewOf(r); ok {
			return "", errPathValueOnView
		}
		return r.PathValue(name), nil
	}
}

// FromContext uses a value that earlier middleware put on the request's
// context, typically the user ID your auth middleware verified: the way to
// allow one request per user. The value goes through KeyOf. No value at all
// is ErrNoContextValue, which the middleware takes as no key and warns
// about once; with Config.KeyRequired it answers 500 (key_misconfigured),
// since only the server's own middleware can set the value. It panics if
// key is nil or not comparable: no context can hold a value under such a
// key.
func FromContext(key any) KeyFunc {
	if key == nil || !reflect.TypeOf(key).Comparable() {
		panic(fmt.Errorf("httplock.FromContext: %w: key %T can never be on a context", ErrInvalidConfig, key))
	}
	return func(r *http.Request) (string, error) {
		v := r.Context().Value(key)
		if v == nil {
			return "", ErrNoContextValue
		}
		return KeyOf(v)
	}
}

// given is the key a client sent in a header or query parameter: none means
// no key, but one sent empty is a key the client meant to send and did not.
func given(vs []string) (string, error) {
	v, err := single(vs)
	if err == nil && v == "" && len(vs) == 1 {
		return "", ErrEmptyValue
	}
	return v, err
}

// single is the one value of a header or query parameter.
func single(vs []string) (string, error) {
	switch len(vs) {
	case 0:
		return "", nil
	case 1:
		return vs[0], nil
	}
	return "", ErrMultipleValues
}

// KeyOf turns a context value into a key: a string or []byte as is, an
// integer in decimal, a fmt.Stringer (a UUID type, say) by its String. nil
// and nil pointers mean no key; any other type is an error wrapping
// ErrKeyType, which the middleware answers with 500 (write a KeyFunc that
// picks the ID out of your user struct).
func KeyOf(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case []byte:
		return string(v), nil
	case int:
		return strconv.Itoa(v), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case int32:
		return strconv.FormatInt(int64(v), 10), nil
	case uint:
		return strconv.FormatUint(uint64(v), 10), nil
	case uint64:
		return strconv.FormatUint(v, 10), nil
	case uint32:
		return strconv.FormatUint(uint64(v), 10), nil
	case fmt.Stringer:
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
			return "", nil
		}
		return v.String(), nil
	}
	return "", fmt.Errorf("%w: %T", ErrKeyType, v)
}
