package echo5lock_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/labstack/echo/v5"
	"github.com/labstack/echo/v5/echotest"

	"github.com/reqlock/reqlock/echo5lock"
	"github.com/reqlock/reqlock/httplock"
)

func FuzzFromParam(f *testing.F) {
	for _, s := range []string{"", "42", "a/b", "{id}", "\xff"} {
		f.Add(s)
	}
	fn := echo5lock.FromParam("id")
	f.Fuzz(func(t *testing.T, v string) {
		c := echotest.ContextConfig{PathValues: echo.PathValues{{Name: "id", Value: v}}}.ToContext(t)
		if k, err := fn(c); k != v || err != nil {
			t.Fatalf("FromParam = %q, %v; want %q", k, err, v)
		}
	})
}

func FuzzFromContext(f *testing.F) {
	for _, s := range []string{"", "alice", "\x00"} {
		f.Add(s)
	}
	fn := echo5lock.FromContext("user")
	f.Fuzz(func(t *testing.T, v string) {
		c := echotest.ContextConfig{}.ToContext(t)
		c.Set("user", v)
		if k, err := fn(c); k != v || err != nil {
			t.Fatalf("FromContext = %q, %v; want %q", k, err, v)
		}
	})
}

// The header, query and Idempotency-Key extractors must agree with httplock's
// on any input: they are the same rules, not a copy of them.
func FuzzFromHeader(f *testing.F) {
	for _, s := range []string{"", "alice", "a, b", "\"q\""} {
		f.Add(s)
	}
	efn, hfn := echo5lock.FromHeader("X-Key"), httplock.FromHeader("X-Key")
	f.Fuzz(func(t *testing.T, v string) {
		c := echotest.ContextConfig{Headers: http.Header{"X-Key": {v}}}.ToContext(t)
		k1, err1 := efn(c)
		k2, err2 := hfn(c.Request())
		if k1 != k2 || (err1 == nil) != (err2 == nil) {
			t.Fatalf("%q: echo5lock %q, %v; httplock %q, %v", v, k1, err1, k2, err2)
		}
	})
}

func FuzzFromQuery(f *testing.F) {
	for _, s := range []string{"", "order=1", "order=1&order=2", "order=%zz"} {
		f.Add(s)
	}
	efn, hfn := echo5lock.FromQuery("order"), httplock.FromQuery("order")
	f.Fuzz(func(t *testing.T, raw string) {
		c := echotest.ContextConfig{}.ToContext(t)
		c.Request().URL = &url.URL{Path: "/", RawQuery: raw}
		k1, err1 := efn(c)
		k2, err2 := hfn(c.Request())
		if k1 != k2 || (err1 == nil) != (err2 == nil) {
			t.Fatalf("echo5lock %q, %v; httplock %q, %v", k1, err1, k2, err2)
		}
	})
}

func FuzzIdempotencyKey(f *testing.F) {
	for _, s := range []string{`"k"`, `k`, `""`, `"k";a=1`} {
		f.Add(s)
	}
	efn, hfn := echo5lock.IdempotencyKey(), httplock.IdempotencyKey()
	f.Fuzz(func(t *testing.T, v string) {
		c := echotest.ContextConfig{Headers: http.Header{httplock.HeaderIdempotencyKey: {v}}}.ToContext(t)
		k1, err1 := efn(c)
		k2, err2 := hfn(c.Request())
		if k1 != k2 || (err1 == nil) != (err2 == nil) {
			t.Fatalf("%q: echo5lock %q, %v; httplock %q, %v", v, k1, err1, k2, err2)
		}
	})
}
