package echolock_test

import (
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/reqlock/reqlock/echolock"
	"github.com/reqlock/reqlock/httplock"
)

func testContext() echo.Context {
	return echo.New().NewContext(httptest.NewRequest("POST", "/", nil), httptest.NewRecorder())
}

func FuzzFromParam(f *testing.F) {
	for _, s := range []string{"", "42", "a/b", "{id}", "\xff"} {
		f.Add(s)
	}
	fn := echolock.FromParam("id")
	f.Fuzz(func(t *testing.T, v string) {
		c := testContext()
		c.SetParamNames("id")
		c.SetParamValues(v)
		if k, err := fn(c); k != v || err != nil {
			t.Fatalf("FromParam = %q, %v; want %q", k, err, v)
		}
	})
}

func FuzzFromContext(f *testing.F) {
	for _, s := range []string{"", "alice", "\x00"} {
		f.Add(s)
	}
	fn := echolock.FromContext("user")
	f.Fuzz(func(t *testing.T, v string) {
		c := testContext()
		c.Set("user", v)
		if k, err := fn(c); k != v || err != nil {
			t.Fatalf("FromContext = %q, %v; want %q", k, err, v)
		}
	})
}

func FuzzFromHeader(f *testing.F) {
	for _, s := range []string{"", "alice", "a, b", "\"q\""} {
		f.Add(s)
	}
	fn := echolock.FromHeader("X-Key")
	f.Fuzz(func(t *testing.T, v string) {
		c := testContext()
		c.Request().Header["X-Key"] = []string{v}
		k, err := fn(c)
		want, werr := httplock.FromHeader("X-Key")(c.Request())
		if k != want || !sameErr(err, werr) {
			t.Fatalf("FromHeader = %q, %v; httplock %q, %v", k, err, want, werr)
		}
	})
}

func FuzzFromQuery(f *testing.F) {
	for _, s := range []string{"", "order=1", "order=1&order=2", "order=%zz"} {
		f.Add(s)
	}
	efn, hfn := echolock.FromQuery("order"), httplock.FromQuery("order")
	f.Fuzz(func(t *testing.T, raw string) {
		c := testContext()
		c.Request().URL.RawQuery = raw
		k1, err1 := efn(c)
		k2, err2 := hfn(c.Request())
		if k1 != k2 || !sameErr(err1, err2) {
			t.Fatalf("echolock %q, %v; httplock %q, %v", k1, err1, k2, err2)
		}
	})
}

func FuzzIdempotencyKey(f *testing.F) {
	for _, s := range []string{`"k"`, `k`, `""`, `"k";a=1`} {
		f.Add(s)
	}
	fn := echolock.IdempotencyKey()
	f.Fuzz(func(t *testing.T, v string) {
		c := testContext()
		c.Request().Header[httplock.HeaderIdempotencyKey] = []string{v}
		k, err := fn(c)
		want, werr := httplock.ParseIdempotencyKeyLenient(v) // an empty header is an error too
		if k != want || (err == nil) != (werr == nil) {
			t.Fatalf("%q: %q, %v; want %q, %v", v, k, err, want, werr)
		}
	})
}

func FuzzStrictIdempotencyKey(f *testing.F) {
	for _, s := range []string{`"k"`, `k`, `""`, `"k";a=1`} {
		f.Add(s)
	}
	fn := echolock.StrictIdempotencyKey()
	f.Fuzz(func(t *testing.T, v string) {
		c := testContext()
		c.Request().Header[httplock.HeaderIdempotencyKey] = []string{v}
		k, err := fn(c)
		want, werr := httplock.ParseIdempotencyKey(v) // the draft's quoted form only
		if k != want || (err == nil) != (werr == nil) {
			t.Fatalf("%q: %q, %v; want %q, %v", v, k, err, want, werr)
		}
	})
}

// sameErr reports whether an adapter's extractor failed as httplock's did.
func sameErr(got, want error) bool {
	return (got == nil) == (want == nil) && (want == nil || errors.Is(got, want) || got.Error() == want.Error())
}
