package echolock_test

import (
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/reqlock/reqlock/echolock"
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
		if k, err := fn(echolock.Carrying(c)); k != v || err != nil {
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
		if k, err := fn(echolock.Carrying(c)); k != v || err != nil {
			t.Fatalf("FromContext = %q, %v; want %q", k, err, v)
		}
	})
}
