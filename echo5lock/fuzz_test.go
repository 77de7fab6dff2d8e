package echo5lock_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v5"
	"github.com/labstack/echo/v5/echotest"

	"github.com/reqlock/reqlock/echo5lock"
	"github.com/reqlock/reqlock/httplock"
)

// Every extractor must agree with its httplock counterpart on any input:
// they are httplock's rules read from an Echo context, not a copy of them.
func agree(t *testing.T, in string, efn httplock.KeyFunc, c *echo.Context, hfn httplock.KeyFunc, r *http.Request) {
	t.Helper()
	k1, err1 := efn(echo5lock.Carrying(c))
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
