package echo5lock_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/labstack/echo/v5"
	"github.com/labstack/echo/v5/echotest"

	"github.com/reqlock/reqlock/echo5lock"
	"github.com/reqlock/reqlock/httplock"
)

// Every extractor must agree with its httplock counterpart on any input:
// they are httplock's rules read from an Echo context, not a copy of them.
func agree(t *testing.T, in string, efn echo5lock.KeyFunc, c *echo.Context, hfn httplock.KeyFunc, r *http.Request) {
	t.Helper()
	k1, err1 := efn(c)
	k2, err2 := hfn(r)
	if k1 != k2 || (err1 == nil) != (err2 == nil) {
		t.Fatalf("%q: echo5lock %q, %v; httplock %q, %v", in, k1, err1, k2, err2)
	}
}

type userKey struct{}

func FuzzFromContext(f *testing.F) {
	for _, s := range []string{"", "alice", "\x00", "unset"} {
		f.Add(s)
	}
	efn, hfn := echo5lock.FromContext("user"), httplock.FromContext(userKey{})
	f.Fuzz(func(t *testing.T, v string) {
		c := echotest.ContextConfig{}.ToContext(t)
		r := httptest.NewRequest("POST", "/", nil)
		if v != "unset" { // "unset" stands for no value at all
			c.Set("user", v)
			r = r.WithContext(context.WithValue(r.Context(), userKey{}, v))
		}
		agree(t, v, efn, c, hfn, r)
	})
}

func FuzzFromParam(f *testing.F) {
	for _, s := range []string{"", "42", "a/b", "{id}", "\xff"} {
		f.Add(s)
	}
	efn, hfn := echo5lock.FromParam("id"), httplock.FromPathValue("id")
	f.Fuzz(func(t *testing.T, v string) {
		c := echotest.ContextConfig{PathValues: echo.PathValues{{Name: "id", Value: v}}}.ToContext(t)
		r := httptest.NewRequest("POST", "/", nil)
		r.SetPathValue("id", v)
		agree(t, v, efn, c, hfn, r)
	})
}

func FuzzFromHeader(f *testing.F) {
	for _, s := range []string{"", "alice", "a, b", "\"q\""} {
		f.Add(s)
	}
	efn, hfn := echo5lock.FromHeader("X-Key"), httplock.FromHeader("X-Key")
	f.Fuzz(func(t *testing.T, v string) {
		c := echotest.ContextConfig{Headers: http.Header{"X-Key": {v}}}.ToContext(t)
		agree(t, v, efn, c, hfn, c.Request())
	})
}

func FuzzFromQuery(f *testing.F) {
	for _, s := range []string{"", "order=1", "order=1&order=2", "order=%zz", "order=a;b"} {
		f.Add(s)
	}
	efn, hfn := echo5lock.FromQuery("order"), httplock.FromQuery("order")
	f.Fuzz(func(t *testing.T, raw string) {
		c := echotest.ContextConfig{}.ToContext(t)
		c.Request().URL = &url.URL{Path: "/", RawQuery: raw}
		agree(t, raw, efn, c, hfn, c.Request())
	})
}

func FuzzIdempotencyKey(f *testing.F) {
	for _, s := range []string{`"k"`, `k`, `""`, `"k";a=1`} {
		f.Add(s)
	}
	efn, hfn := echo5lock.IdempotencyKey(), httplock.IdempotencyKey()
	f.Fuzz(func(t *testing.T, v string) {
		c := echotest.ContextConfig{Headers: http.Header{httplock.HeaderIdempotencyKey: {v}}}.ToContext(t)
		agree(t, v, efn, c, hfn, c.Request())
	})
}

func FuzzStrictIdempotencyKey(f *testing.F) {
	for _, s := range []string{`"k"`, `k`, `""`, `"k";a=1`} {
		f.Add(s)
	}
	efn, hfn := echo5lock.StrictIdempotencyKey(), httplock.StrictIdempotencyKey()
	f.Fuzz(func(t *testing.T, v string) {
		c := echotest.ContextConfig{Headers: http.Header{httplock.HeaderIdempotencyKey: {v}}}.ToContext(t)
		agree(t, v, efn, c, hfn, c.Request())
	})
}
